const { PGlite } = require('@electric-sql/pglite');
const { PGLiteSocketServer } = require('@electric-sql/pglite-socket');
const { Pool } = require('pg');
const fs = require('fs'), os = require('os'), path = require('path');
(async () => {
  const db = await PGlite.create();
  const sock = fs.mkdtempSync(path.join(os.tmpdir(), 'pgs-'));
  const srv = new PGLiteSocketServer({ db, path: path.join(sock, '.s.PGSQL.5432'), maxConnections: 4 });
  await srv.start();
  const pool = new Pool({ host: sock, port: 5432, user: 'postgres', database: 'postgres', max: 1 });
  pool.on('error', e => console.log('pool error', e.message));
  const steps = process.argv[2] === 'many' ? 200 : 0;
  await Promise.all(Array.from({length: steps}, () => pool.query('select 1')));
  console.log('after many');
  try { await pool.query('select 1/0'); } catch (e) { console.log('err', e.code); }
  console.log((await pool.query('select 1 as ok')).rows);
  await pool.end(); await srv.stop(); await db.close();
})().catch(e => { console.error('FAIL', e.message); process.exit(1); });
