// Data for the scenarios: made through the API where the API makes it (keys, users,
// tokens), in bulk SQL where only volume matters (planets, other regions' keys).
import pg from 'pg';

export async function withClient(url, work) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function call(base, method, path, { headers = {}, body } = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Creates keys with `apiKey` until its region holds `total`; resolves to the last one made. */
export async function fillRegion(base, apiKey, total) {
  const region = await call(base, 'GET', '/auth/regions/me', { headers: { 'x-api-key': apiKey } });
  let last = null;
  for (let n = region.apiKeys.length; n < total; n++) {
    last = await call(base, 'POST', '/auth/region/api-keys', {
      headers: { 'x-api-key': apiKey },
      body: { description: `bench key ${n + 1}` },
    });
  }
  return { regionId: region.id, last };
}

export async function signUp(base, email, password, name) {
  const user = await call(base, 'POST', '/user/signup', { body: { email, password, name } });
  const { token } = await call(base, 'POST', '/auth/token', { body: { email, password } });
  return { ...user, token, basic: `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}` };
}

/** `count` planets by `creatorId` with every optional field set, each with two satellites. */
export async function seedPlanets(url, creatorId, count) {
  await withClient(url, async (db) => {
    await db.query(
      `INSERT INTO planets (name, description, type, habitability_index, mass, radius, gravity,
                            temperature_min, temperature_max, temperature_average, atmosphere, discovered_at, tags, creator_id)
       SELECT 'Planet ' || n, 'Planet number ' || n || ' of the benchmark', 'terrestrial', 0.5, 0.107, 0.532, 3.721,
              -153, 20, -65, '[{"compound":"CO2","percentage":95.3},{"compound":"N2","percentage":2.7}]',
              '1610-01-07T00:00:00Z', '{solar-system,rocky}', $1
         FROM generate_series(1, $2::int) AS n`,
      [creatorId, count],
    );
    await db.query(
      `INSERT INTO satellites (planet_id, name, description, diameter, type, orbital_period, distance)
       SELECT p.id, p.name || ' moon ' || m, 'A moon', 22.2, 'moon', 0.319, 9376 FROM planets p, generate_series(1, 2) AS m`,
    );
    await db.query('ANALYZE planets; ANALYZE satellites');
  });
}

/** `count` keys of other regions (one in ten revoked), in 1,000 regions: the hash index's haystack. */
export async function seedOtherKeys(url, count) {
  await withClient(url, async (db) => {
    await db.query(
      `INSERT INTO regions (id, name) SELECT gen_random_uuid(), 'Bench region ' || n FROM generate_series(1, 1000) AS n`,
    );
    await db.query(
      `WITH r AS (SELECT id, row_number() OVER (ORDER BY id) - 1 AS i FROM regions WHERE name LIKE 'Bench region %')
       INSERT INTO api_keys (id, region_id, token_hash, token_preview, description, permissions, revoked_at)
       SELECT gen_random_uuid(), r.id, encode(sha256(('bench-key-' || n)::bytea), 'hex'), 'rk_bench' || chr(8230) || lpad((n % 10000)::text, 4, '0'),
              'bulk', ARRAY['region:read', 'keys:write'], CASE WHEN n % 10 = 0 THEN now() END
         FROM generate_series(1, $1::int) AS n JOIN r ON r.i = n % 1000`,
      [count],
    );
    await db.query('ANALYZE api_keys; ANALYZE regions');
  });
}

/** Revokes the keys the create-delete flow left behind when the load stopped mid-way. */
export async function revokeFlowLeftovers(url, regionId) {
  await withClient(url, (db) =>
    db.query(
      `UPDATE api_keys SET revoked_at = now() WHERE region_id = $1 AND description = 'bench-flow' AND revoked_at IS NULL`,
      [regionId],
    ),
  );
}
