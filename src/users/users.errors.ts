import { ConflictError, defineProblemType } from '../common/problem';

export const EMAIL_TAKEN = defineProblemType({
  slug: 'email-taken',
  status: 409,
  title: 'Email already registered',
  meaning:
    'An account with this email already exists. Emails are compared in their canonical form, so other spellings of the ' +
    'same address (case, Unicode normalisation, the domain in IDNA form) are the same account.',
  action: 'Sign in with this email (POST /auth/token), or sign up with another email.',
  example: () => new EmailTakenError(),
});

export class EmailTakenError extends ConflictError {
  constructor() {
    super(EMAIL_TAKEN, 'An account with this email already exists. Sign in, or use another email.');
  }
}
