import { randomBytes } from 'node:crypto';

import { type CreateRecipes, post } from '../create-recipes';

/** The creates of the users feature, for test/e2e/locations.e2e-spec.ts. */
export const creates: CreateRecipes = {
  // The account's Location is /me, which answers the new user's own credentials.
  createUser: async (ctx, extra) => {
    const email = `located-${randomBytes(6).toString('hex')}@example.com`;
    const password = 'a-long-password';
    const res = await post(ctx, '/user/signup', { email, password }, {}, extra);
    const basic = `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`;
    return {
      status: res.statusCode,
      location: res.headers.location,
      path: '/me',
      readHeaders: { authorization: basic },
    };
  },
};
