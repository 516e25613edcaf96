# syntax=docker/dockerfile:1

# The Node version of the `node` devDependency, which npm scripts and the tests run on, so
# the image runs what the tests proved. Bookworm, like the machines the tests run on.
FROM node:24.21.0-bookworm-slim AS base
WORKDIR /app

# Compiles src/ to dist/ with the devDependencies (TypeScript, and the Nest CLI, whose
# @nestjs/swagger plugin, set in nest-cli.json, writes each DTO's schema from its types).
FROM base AS build
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY nest-cli.json tsconfig.json tsconfig.build.json ormconfig.ts ./
COPY src ./src
RUN npm run build

# Only what runs: production dependencies and dist/. test/e2e/production-install.e2e-spec.ts
# replays these steps (this stage and the ones it starts from) and runs the result.
FROM base AS production
# As `npm run serve`: glibc's malloc keeps at most two arenas. By default each thread that
# allocates (V8's compiler and GC workers, libuv's pool) may get an arena of its own, and
# memory freed in one stays resident there: about 10 MB of the service's under load.
ENV NODE_ENV=production MALLOC_ARENA_MAX=2
# Behind a balancer that probes /health/ready (deploy/haproxy.cfg: every second, out after two
# failures), SIGTERM turns readiness 503 and the listener serves this long before it closes,
# so the balancer stops sending first and a rolling restart loses no request.
ENV SHUTDOWN_DELAY_MS=5000
COPY package.json package-lock.json ./
# --omit=optional as well: npm counts @nestjs/swagger's optional peer TypeScript (only its
# build-time plugin uses it) and pg's Cloudflare Workers socket as optional production
# packages, and neither is used at run time. Install scripts run only for the packages
# allowed in package.json's allowScripts (bcrypt, which brings prebuilt binaries).
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --omit=optional --no-audit --no-fund
COPY --from=build /app/dist ./dist
# With DATABASE_URL=embedded the embedded database keeps its files in DATA_DIR (./data): the one
# place the unprivileged user may write. Mount a volume there to keep them.
RUN install -d -o node -g node data
USER node
# The API, and the metrics listener (METRICS_PORT), which is never published by compose.yaml.
EXPOSE 3000 9464
# The server finishes in-flight requests and closes the database on SIGTERM; it starts no
# child processes, so node can be PID 1 without an init.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/live', { signal: AbortSignal.timeout(4000) }).then((res) => process.exit(res.ok ? 0 : 1), () => process.exit(1))"]
# As `npm run serve`, without npm in between: the signals reach node.
CMD ["node", "--no-warnings", "--max-semi-space-size=16", "--max-old-space-size=384", "dist/src/main.js"]
