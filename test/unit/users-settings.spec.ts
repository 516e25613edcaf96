import { loadSettings } from '../../src/config/app-config';
import { UsersSettings } from '../../src/users/users.settings';

describe('UsersSettings', () => {
  it('hashes passwords at bcrypt cost 12 by default', () => {
    expect(loadSettings(UsersSettings, {}).BCRYPT_COST).toBe(12);
  });

  it.each(['3', '17'])('refuses BCRYPT_COST=%s and names it', (value) => {
    expect(() => loadSettings(UsersSettings, { BCRYPT_COST: value })).toThrow(/BCRYPT_COST=/);
  });
});
