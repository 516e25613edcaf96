import passport, { type Strategy } from 'passport';

/**
 * Runs Passport with the given strategy instances (tried in order) and resolves with the
 * authenticated principal, or false when every strategy declined. An error a strategy
 * raises on purpose (a 401 with its challenge, a 429) rejects as it is.
 *
 * Guards call this instead of @nestjs/passport's AuthGuard: that one looks strategies up
 * by name in the process-wide passport registry, where the last application created
 * wins, so with two applications in one process (tests run two against one database)
 * one would authenticate with the other's services, closed ones once it stops.
 */
export function authenticateWith<T>(strategies: Strategy[], request: unknown, response: unknown): Promise<T | false> {
  // Passport keeps a request's callbacks on the strategy object itself, so each request
  // gets an object of its own (what passport does for strategies named by string).
  const perRequest = strategies.map((strategy) => Object.create(strategy) as Strategy);
  return new Promise((resolve, reject) => {
    // passport takes a list of strategy objects; its type definitions know only names.
    const authenticate = passport.authenticate(
      perRequest as unknown as Strategy,
      { session: false },
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as it came, below
      (err: unknown, user: T | false) => (err ? reject(err) : resolve(user)),
    ) as (request: unknown, response: unknown, next: (err: unknown) => void) => void;
    // A strategy's error goes on as it came: the problem filter tells a database fault (503) by
    // its code, which a wrapper would hide.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    authenticate(request, response, (err: unknown) => (err ? reject(err) : resolve(false)));
  });
}
