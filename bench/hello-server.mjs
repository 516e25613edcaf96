// The floor: bare Fastify answering a constant, on PORT. Every run drives it flat out to show
// that the load generator can go far faster than the service. (The problem answers of
// scenario 7 are compared with bench/problem-server.mjs, which does their work.)
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
