import bcrypt from 'bcrypt';

import type { User } from '../../src/users/entities/user.entity';
import { PasswordHasher } from '../../src/users/password-hasher';
import { EmailTakenError } from '../../src/users/users.errors';
import { UsersRepository } from '../../src/users/users.repository';
import { UsersService } from '../../src/users/users.service';
import { automock } from '../support/service-mocks';

/** The real hasher at bcrypt's lowest cost: the test checks a real hash, in milliseconds. */
function newUsersServiceTest() {
  const repository = automock(UsersRepository);
  const sut = new UsersService(repository, new PasswordHasher({ BCRYPT_COST: 4 }));
  return { sut, repository };
}

const PASSWORD = 'correct horse battery';

describe(UsersService.name, () => {
  let sut: UsersService;
  let repository: jest.Mocked<UsersRepository>;

  beforeEach(() => {
    ({ sut, repository } = newUsersServiceTest());
    repository.insertUnlessEmailTaken.mockImplementation(async (user) => ({ id: 1, ...user }) as User);
  });

  describe('signUp', () => {
    it('stores the email as written and its canonical form, so that one address is one account', async () => {
      await sut.signUp({ email: '  Ann@BÜCHER.org ', password: PASSWORD });

      expect(repository.insertUnlessEmailTaken).toHaveBeenCalledWith(
        expect.objectContaining({ email: 'Ann@bücher.org', emailCanonical: 'ann@xn--bcher-kva.org', name: null }),
      );
    });

    it('refuses an address with an invisible character with a 400 naming email, before hashing or inserting', async () => {
      const refusal = sut.signUp({ email: 'an​n@example.org', password: PASSWORD });

      await expect(refusal).rejects.toMatchObject({
        status: 400,
        errors: [{ field: 'email', message: expect.stringContaining('invisible') }],
      });
      expect(repository.insertUnlessEmailTaken).not.toHaveBeenCalled();
    });

    // The service asks no question before inserting: the unique index on email_canonical refuses
    // a taken email, also to the loser of two concurrent sign-ups, and the repository reports
    // that refusal as null (the race itself is in the e2e suite, on a real database).
    it('answers a taken email with the 409 conflict error', async () => {
      repository.insertUnlessEmailTaken.mockResolvedValue(null);

      const refusal = sut.signUp({ email: 'ANN@example.org', password: PASSWORD });

      await expect(refusal).rejects.toBeInstanceOf(EmailTakenError);
      await expect(refusal).rejects.toMatchObject({ status: 409, slug: 'email-taken' });
    });

    it('lets any other failure of the insert through rather than calling the email taken', async () => {
      const outage = new Error('connection terminated');
      repository.insertUnlessEmailTaken.mockRejectedValue(outage);

      await expect(sut.signUp({ email: 'ann@example.org', password: PASSWORD })).rejects.toBe(outage);
    });

    it('stores the password only as a bcrypt hash of it', async () => {
      await sut.signUp({ name: 'Ann', email: 'ann@example.org', password: PASSWORD });

      const [stored] = repository.insertUnlessEmailTaken.mock.calls[0];
      expect(Object.keys(stored).sort()).toEqual(['email', 'emailCanonical', 'name', 'passwordHash']);
      expect(stored.passwordHash).toMatch(/^\$2b\$04\$/);
      await expect(bcrypt.compare(PASSWORD, stored.passwordHash)).resolves.toBe(true);
      expect(JSON.stringify(stored)).not.toContain(PASSWORD);
    });
  });

  it('looks an email up by its canonical form', async () => {
    repository.findByCanonicalEmail.mockResolvedValue(null);

    await sut.findByEmail(' ANN@xn--bcher-kva.org');
    await sut.findByEmail('ＡＮＮ@BÜCHER.org');

    expect(repository.findByCanonicalEmail.mock.calls).toEqual([['ann@xn--bcher-kva.org'], ['ann@xn--bcher-kva.org']]);
  });

  it('finds nobody for an address the rules refuse, without asking the database', async () => {
    await expect(sut.findByEmail('ann‮@example.org')).resolves.toBeNull();

    expect(repository.findByCanonicalEmail).not.toHaveBeenCalled();
  });
});
