const { PGlite } = require('@electric-sql/pglite');
const { PGLiteSocketServer } = require('@electric-sql/pglite-socket');
const { Client } = require('pg');
const fs = require('fs'), os = require('os'), path = require('path');
(async () => {
  const db = await PGlite.create();
  const sock = fs.mkdtempSync(path.join(os.tmpdir(), 'pgs-'));
  const srv = new PGLiteSocketServer({ db, path: path.join(sock, '.s.PGSQL.5432'), maxConnections: 1, debug: !!process.env.DBG });
  await srv.start();
  const c = new Client({ host: sock, port: 5432, user: 'postgres', database: 'postgres' });
  c.on('error', e => console.log('client error', e.message));
  await c.connect();
  for (const q of [['select 1/$1::int', [0]], ['select 1 as a', []], ['select 1/0', []], ['select 2 as b', []]]) {
    try { console.log((await c.query(q[0], q[1])).rows); } catch (e) { console.log('err', e.code, e.message); }
  }
  await c.end(); await srv.stop(); await db.close();
})().catch(e => { console.error('FAIL', e); process.exit(1); });
