// `npm run build && node bench/log-line-cost.mjs`: what one request line costs to make and
// write, in µs of CPU (user + system) per line, in isolation: the service's request line
// (OneLinePerRequest, which writes it itself to the root logger's destination) against the
// same line through pino's log method and the service's serializers, as it was written
// before, and against the least any JSON line can cost (the line built with a template
// string and written with fs.writeSync). Each goes to /dev/null synchronously, one write per
// line, or gathered and written 4 KiB at a time. Then the line's timestamp: pino's isoTime
// against the service's isoTimeBySecond. The unknown path costs about 18–20 µs of CPU per
// request (bench/RESULTS.md), so a line within 15% of it must cost under about 3 µs there,
// where the server's own work around it (its garbage, caches) adds to what is measured here.
// Last, what giving a request its logger costs at any level: a child of the service's root
// logger, as Fastify makes one for every request, against the service's LazyChildLogger,
// which makes that child only when used.
//
//   BENCH_LINES=300000
import { openSync, writeSync } from 'node:fs';

import pino from 'pino';

import { isoTimeBySecond } from '../dist/src/common/logging/iso-time.js';
import { LazyChildLogger } from '../dist/src/common/logging/lazy-child-logger.js';
import { createRootLogger, OneLinePerRequest } from '../dist/src/common/logging/logger.js';
import { scrubKeys } from '../dist/src/common/logging/scrub.js';

const LINES = Number(process.env.BENCH_LINES ?? 300_000);
const request = {
  id: '370ebc03-905c-4279-bce2-14cad6b1fb83',
  method: 'GET',
  url: '/no/such/route',
  ip: '127.0.0.1',
  routeOptions: { url: undefined },
};
const reply = { statusCode: 404, elapsedTime: 0.4123 };

/** CPU µs per call of `line`, after a warm-up. */
function cost(line) {
  for (let i = 0; i < 50_000; i++) line();
  const start = process.cpuUsage();
  for (let i = 0; i < LINES; i++) line();
  const { user, system } = process.cpuUsage(start);
  return (user + system) / LINES;
}

const devNull = () => openSync('/dev/null', 'w');
const sync = () => pino.destination({ dest: devNull(), sync: true });
const batched = () => pino.destination({ dest: devNull(), sync: false, minLength: 4096 });
const byHand = (write) => () =>
  write(
    `{"level":30,"time":"${new Date().toISOString()}","requestId":${JSON.stringify(request.id)},"req":{"method":"${request.method}","path":${JSON.stringify(scrubKeys(request.url.split('?')[0]))},"remoteAddress":"${request.ip}"},"res":{"statusCode":${reply.statusCode}},"responseTime":${Math.round(reply.elapsedTime * 10) / 10},"msg":"request completed"}\n`,
  );
const service = (destination) => {
  const controller = new OneLinePerRequest(createRootLogger({ level: 'info', destination }));
  return () => controller.requestCompleted(null, request, reply);
};
const throughPino = (destination) => {
  const lines = createRootLogger({ level: 'info', destination }).child({}, { redact: { paths: [] } });
  return () =>
    lines.info(
      { requestId: request.id, req: request, res: reply, responseTime: Math.round(reply.elapsedTime * 10) / 10 },
      'request completed',
    );
};
const fd = devNull();
const root = createRootLogger({ level: 'warn', destination: sync() });
let requests = 0;
const rows = [
  ["the service's line (OneLinePerRequest), one write per line", cost(service(sync()))],
  ["the service's line (OneLinePerRequest), written 4 KiB at a time", cost(service(batched()))],
  ["the same line through pino's log method, one write per line", cost(throughPino(sync()))],
  ["the same line through pino's log method, written 4 KiB at a time", cost(throughPino(batched()))],
  ['the least: a template string, written with fs.writeSync', cost(byHand((s) => writeSync(fd, s)))],
  [
    'the least: a template string, written 4 KiB at a time',
    cost(
      byHand(
        (
          (b) => (s) =>
            b.write(s)
        )(batched()),
      ),
    ),
  ],
  ["the line's timestamp: pino's isoTime", cost(pino.stdTimeFunctions.isoTime)],
  ["the line's timestamp: isoTimeBySecond", cost(isoTimeBySecond())],
  [
    "a request's logger: a child of the service's root logger, as Fastify makes one",
    cost(() => root.child({ requestId: `r${requests++}` }, {})),
  ],
  [
    "a request's logger made when used (LazyChildLogger), not used",
    cost(() => LazyChildLogger.factory(root, { requestId: `r${requests++}` }, {})),
  ],
];
console.log(`Node ${process.version}, ${LINES.toLocaleString('en-US')} lines each, CPU µs per line:`);
for (const [what, us] of rows) console.log(`  ${us.toFixed(2).padStart(6)}  ${what}`);
