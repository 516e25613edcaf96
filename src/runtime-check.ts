/**
 * Imported first by the entry points. The project runs on Node 24 LTS: `npm start` and
 * `npm test` bring it in as a devDependency, but a server started with another `node`
 * (a shell's, a container's) would otherwise fail later and less clearly, or run on an
 * unsupported runtime. Plain Node APIs only: this must load before anything else does.
 */
const REQUIRED_MAJOR = 24;
const major = Number(process.versions.node.split('.')[0]);
if (major < REQUIRED_MAJOR) {
  process.stderr.write(
    `This service needs Node.js ${REQUIRED_MAJOR} LTS or newer; this is ${process.version} (${process.execPath}).\n` +
      'Start it with `npm start`, which runs the Node version the project installs, or put Node 24 on PATH (see .nvmrc).\n',
  );
  process.exit(1);
}
