import { randomUUID } from 'node:crypto';

import { basic, check, type ClientContext, expectData, expectProblem } from '../support';

/**
 * Users and their credentials: sign-up, tokens, /me. Shares `people` (Ada and Bob) with the
 * features that act as a user.
 */
export async function exercise({ anyone, client, share }: ClientContext): Promise<void> {
  const ada = { name: 'Ada', email: `ada-${randomUUID()}@example.com`, password: 'correct horse battery' };
  const created = await expectData(anyone.POST('/user/signup', { body: ada }), 201, 'sign up');
  check(created.name === 'Ada', 'the account has its name');
  await expectProblem(
    anyone.POST('/user/signup', { body: { ...ada, email: ada.email.toUpperCase() } }),
    409,
    'email-taken',
    'sign up again',
  );
  await expectProblem(
    anyone.POST('/user/signup', { body: { email: `short-${randomUUID()}@example.com`, password: 'short' } }),
    400,
    'validation',
    'sign up with a short password',
  );
  const bobEmail = `bob-${randomUUID()}@example.com`;
  const bobCreated = await expectData(
    anyone.POST('/user/signup', { body: { email: bobEmail, password: 'another good password' } }),
    201,
    'sign up without a name',
  );
  check(bobCreated.name === null, 'no name is null');

  const { token } = await expectData(
    anyone.POST('/auth/token', { body: { email: ada.email, password: ada.password } }),
    201,
    'get a token',
  );
  await expectProblem(
    anyone.POST('/auth/token', { body: { email: ada.email, password: 'wrong password' } }),
    401,
    'unauthenticated',
    'a token for a wrong password',
  );
  await expectProblem(
    anyone.POST('/auth/token', { body: { email: 'not an email', password: ada.password } }),
    400,
    'validation',
    'a token for a malformed email',
  );

  const asAda = client({ Authorization: `Bearer ${token}` });
  const asBob = client(basic(bobEmail, 'another good password'));
  const me = await expectData(asAda.GET('/me'), 200, 'me with a token');
  check(me.id === created.id, 'the token is Ada’s');
  const bob = await expectData(asBob.GET('/me'), 200, 'me with Basic');
  await expectProblem(anyone.GET('/me'), 401, 'unauthenticated', 'me without credentials');
  await expectProblem(
    client({ Authorization: 'Bearer not.a.token' }).GET('/me'),
    401,
    'unauthenticated',
    'me with a made-up token',
  );
  share('people', {
    ada: { id: me.id, email: ada.email, password: ada.password, api: asAda },
    bob: { id: bob.id, email: bobEmail, password: 'another good password', api: asBob },
  });
}
