import { ConflictError } from '../common/problem/problem';

export class EmailTakenError extends ConflictError {
  constructor() {
    super('email-taken', 'Email already registered', 'An account with this email already exists. Sign in, or use another email.');
  }
}
