// The floor: bare Fastify answering a constant, on PORT. Scenario 7 compares the service's
// database-free problem answers with it, and every run drives it flat out to show that the
// load generator can go far faster than the service.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
