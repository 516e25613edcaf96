import { QueryFailedError, QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';

import { databaseFault } from '../../src/common/problem/database-faults';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });
const wrapped = (driverError: Error) => new QueryFailedError('SELECT 1', [], driverError);

describe('databaseFault', () => {
  it.each([
    ['a lock timeout (55P03)', wrapped(withCode('55P03')), 1],
    ['a statement timeout (57014)', wrapped(withCode('57014')), 1],
    ['a serialization failure (40001)', wrapped(withCode('40001')), 1],
    ['a deadlock (40P01)', wrapped(withCode('40P01')), 1],
    ['a terminated session (57P01)', wrapped(withCode('57P01')), 5],
    ['a server starting up (57P03)', withCode('57P03'), 5],
    ['too many connections (53300)', withCode('53300'), 5],
    ['a connection exception (08006)', wrapped(withCode('08006')), 5],
    ['a refused connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'), 5],
    ['a reset connection', wrapped(withCode('ECONNRESET')), 5],
    [
      'refused on every address of a name',
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect failed'),
      5,
    ],
    ['a connection that ended', wrapped(new Error('Connection terminated unexpectedly')), 5],
    ['a connection that did not open in time', new Error('Connection terminated due to connection timeout'), 5],
    ['no pooled connection free in time', new Error('timeout exceeded when trying to connect'), 5],
    ['no reply within query_timeout', wrapped(new Error('Query read timeout')), 5],
    ['a transaction whose connection was lost', new QueryRunnerAlreadyReleasedError(), 5],
    ['a transaction whose connection was lost, seen by its manager', new QueryRunnerProviderAlreadyReleasedError(), 5],
    ['a pooler refusing a client (08P01)', withCode('08P01', 'no more connections allowed (max_client_conn)'), 5],
  ])('takes %s for a 503', (_, err, retryAfterSeconds) => {
    expect(databaseFault(err)).toMatchObject({ retryAfterSeconds, detail: expect.stringMatching(/retry/) });
  });

  it.each([
    ['a unique violation (23505)', wrapped(withCode('23505'))],
    ['a syntax error (42601)', wrapped(withCode('42601'))],
    ['a wrong password for the database (28P01)', withCode('28P01')],
    ['a plain programming error', new TypeError('x is not a function')],
    ['a message that only mentions a timeout', new Error('request timeout while rendering')],
    ['something that is not an error', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('leaves %s to be a 500 (or its own answer)', (_, err) => {
    expect(databaseFault(err)).toBeNull();
  });
});
