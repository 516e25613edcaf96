// Runs one autocannon measurement in this process and prints its figures as JSON.
import autocannon from 'autocannon';

const spec = JSON.parse(process.argv[2]);
const headers = spec.headers ?? {};
const createDelete = [
  {
    method: 'POST',
    path: '/auth/region/api-keys',
    headers: { ...headers, 'content-type': 'application/json' },
    body: '{"description":"bench-flow"}',
    onResponse: (status, body, context) => {
      context.id = status === 201 ? JSON.parse(body).id : undefined;
    },
  },
  {
    method: 'DELETE',
    headers,
    // No key made: start over with a POST.
    setupRequest: (request, context) =>
      context.id ? { ...request, path: `/auth/region/api-keys/${context.id}` } : null,
  },
];

const result = await autocannon({
  url: spec.url,
  connections: spec.connections,
  duration: spec.seconds,
  headers,
  timeout: 10,
  ...(spec.flow === 'create-delete' ? { requests: createDelete } : {}),
});
process.stdout.write(
  JSON.stringify({
    rps: result.requests.total / result.duration,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  }),
);
