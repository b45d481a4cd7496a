// Real Druid clients from npm, unmodified, against a Strata router:
// plywood + plywood-druid-requester (the library under Turnilo),
// @cubejs-backend/druid-driver, Druid SQL over HTTP exactly as pydruid's
// DB-API sends it, and the requests Grafana's Druid plugin sends through
// go-druid. cmd/conformance (clients.go) ingests the datasource first
// and runs this; each check prints one "PASS name" or "FAIL name: why" line.
//
// The clients talk to a recording proxy in front of the router, and every
// check's requests are compared with fixtures/<check>.json, so a change in
// what a client sends (a new path, header or query shape) fails here instead
// of in a user's dashboard. `--update` rewrites the fixtures.
//
//   node clients.mjs --router http://127.0.0.1:8888 --datasource clients_wiki [--update]
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

const args = process.argv.slice(2);
const arg = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const routerURL = new URL(arg('--router', 'http://127.0.0.1:8888'));
const datasource = arg('--datasource', 'clients_wiki');
const update = args.includes('--update');
const only = arg('--only', '');

// ---- recording proxy ----

// Headers that vary by run or by transport, not by what the client means.
const volatileHeaders = new Set(['host', 'content-length', 'connection', 'keep-alive']);
let recorded = [];

const proxy = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const headers = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (!volatileHeaders.has(k)) headers[k] = v;
    }
    let parsed = body.length ? body.toString('utf8') : undefined;
    try {
      if (parsed !== undefined) parsed = JSON.parse(parsed);
    } catch {
      // not JSON: kept as text
    }
    recorded.push({ method: req.method, path: req.url, headers: sortKeys(headers), body: parsed });
    const up = http.request(
      { host: routerURL.hostname, port: routerURL.port || 80, method: req.method, path: req.url, headers: req.headers },
      (ur) => {
        res.writeHead(ur.statusCode, ur.headers);
        ur.pipe(res);
      },
    );
    up.on('error', (e) => {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'proxy: ' + e.message }));
    });
    up.end(body);
  });
});

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    const out = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys(v[k]);
    return out;
  }
  return v;
}

// ---- checks ----

function assertEq(what, got, want) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
}

let failed = 0;

async function check(name, fn) {
  if (only && !name.includes(only)) return;
  recorded = [];
  let err;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  // Concurrent requests of one check may arrive in any order.
  const reqs = recorded.map(sortKeys).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  const file = path.join(here, 'fixtures', name.replace(/[^A-Za-z0-9_.-]+/g, '_') + '.json');
  const text = JSON.stringify(reqs, null, 2) + '\n';
  if (!err) {
    if (update) {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
    } else if (!fs.existsSync(file)) {
      err = new Error(`no fixture ${path.relative(here, file)} (run with --update to record it)`);
    } else if (fs.readFileSync(file, 'utf8') !== text) {
      err = new Error(`the client's requests changed from ${path.relative(here, file)}: ${firstDifference(JSON.parse(fs.readFileSync(file, 'utf8')), reqs)}`);
    }
  }
  if (err) {
    failed++;
    console.log(`FAIL ${name}: ${String(err && err.message ? err.message : err).replace(/\s+/g, ' ').slice(0, 2000)}`);
  } else {
    console.log(`PASS ${name}`);
  }
}

// firstDifference names the first request that differs from the fixture.
function firstDifference(want, got) {
  for (let i = 0; i < Math.max(want.length, got.length); i++) {
    const w = JSON.stringify(want[i]);
    const g = JSON.stringify(got[i]);
    if (w !== g) return `request ${i + 1} of ${got.length} (fixture: ${want.length}): got ${g}, fixture has ${w}`;
  }
  return 'same requests, different formatting';
}

// The datasource clients.go ingests: 12 edits over three hours of 2026-01-01
// (channel #en ×6 adding 44, #fr ×3 adding 23, #de ×3 adding 20; 7 users).
async function plywoodChecks(base) {
  const plywood = require('plywood');
  const { druidRequesterFactory } = require('plywood-druid-requester');
  const { External, $, ply, r } = plywood;
  const requester = druidRequesterFactory({ host: `${base.hostname}:${base.port}`, timeout: 60000 });
  const interval = { start: new Date('2026-01-01T00:00:00Z'), end: new Date('2026-01-02T00:00:00Z') };
  let external;
  const inDay = () => $('wiki').filter($('time').overlap(interval));
  const compute = async (ex) => (await ex.compute({ wiki: external })).toJS();

  await check('plywood introspect', async () => {
    external = await External.fromJS({ engine: 'druid', source: datasource, timeAttribute: 'time', allowSelectQueries: true }, requester).introspect();
    const attrs = {};
    for (const a of external.attributes) attrs[a.name] = a.type;
    assertEq('attributes', sortKeys(attrs), {
      added: 'NUMBER', channel: 'STRING', deleted: 'NUMBER', page: 'STRING', time: 'TIME', user: 'STRING',
    });
  });
  if (!external) {
    // Introspection failed: the other checks still run, on the attributes
    // declared by hand, so one failure does not hide the rest.
    external = External.fromJS({
      engine: 'druid', source: datasource, timeAttribute: 'time', allowSelectQueries: true,
      attributes: [
        { name: 'time', type: 'TIME' }, { name: 'channel', type: 'STRING' }, { name: 'page', type: 'STRING' },
        { name: 'user', type: 'STRING' }, { name: 'added', type: 'NUMBER' }, { name: 'deleted', type: 'NUMBER' },
      ],
    }, requester);
  }

  await check('plywood count and sum', async () => {
    const got = await compute(ply().apply('wiki', inDay()).apply('Count', $('wiki').count()).apply('Added', $('wiki').sum('$added')));
    assertEq('totals', got.data, [{ Count: 12, Added: 87 }]);
  });

  await check('plywood split sort limit', async () => {
    const got = await compute(
      ply().apply('wiki', inDay()).apply(
        'Channels',
        $('wiki').split('$channel', 'Channel').apply('Added', $('wiki').sum('$added')).sort('$Added', 'descending').limit(2),
      ),
    );
    assertEq('channels', got.data[0].Channels.data, [{ Channel: '#en', Added: 44 }, { Channel: '#fr', Added: 23 }]);
  });

  await check('plywood time bucket', async () => {
    const got = await compute(
      ply().apply('wiki', inDay()).apply(
        'Hours',
        $('wiki').split($('time').timeBucket('PT1H', 'Etc/UTC'), 'Hour').apply('Count', $('wiki').count()).sort('$Hour', 'ascending'),
      ),
    );
    const rows = got.data[0].Hours.data.map((d) => ({ start: new Date(d.Hour.start).toISOString(), Count: d.Count }));
    assertEq('hours', rows, [
      { start: '2026-01-01T00:00:00.000Z', Count: 3 },
      { start: '2026-01-01T01:00:00.000Z', Count: 4 },
      { start: '2026-01-01T02:00:00.000Z', Count: 5 },
    ]);
  });

  await check('plywood filter', async () => {
    const got = await compute(
      ply().apply('wiki', inDay().filter($('channel').is(r('#en')))).apply('Count', $('wiki').count()).apply('Added', $('wiki').sum('$added')),
    );
    assertEq('#en', got.data, [{ Count: 6, Added: 44 }]);
  });

  await check('plywood countDistinct', async () => {
    const got = await compute(
      ply().apply('wiki', inDay())
        .apply('Users', $('wiki').countDistinct('$user'))
        .apply('EnUsers', $('wiki').filter($('channel').is(r('#en'))).countDistinct('$user')),
    );
    // Druid's cardinality aggregator is a HyperLogLog estimate: exact to the
    // unit at these sizes, not to the last digit.
    const d = got.data[0];
    assertEq('distinct users', [Math.round(d.Users), Math.round(d.EnUsers)], [7, 3]);
  });

  await check('plywood raw rows', async () => {
    const got = await compute(inDay().filter($('channel').is(r('#de'))).select('time', 'user', 'added').limit(10));
    const rows = got.data.map((d) => ({ time: new Date(d.time).toISOString(), user: d.user, added: d.added }));
    rows.sort((a, b) => (a.time < b.time ? -1 : 1));
    assertEq('#de rows', rows, [
      { time: '2026-01-01T01:15:00.000Z', user: 'dave', added: 3 },
      { time: '2026-01-01T02:00:00.000Z', user: 'dave', added: 8 },
      { time: '2026-01-01T02:50:00.000Z', user: 'gina', added: 9 },
    ]);
  });
}

async function cubeChecks(base) {
  const { DruidDriver } = require('@cubejs-backend/druid-driver');
  const driver = new DruidDriver({ url: `http://${base.hostname}:${base.port}` });

  await check('cube SQL query', async () => {
    const rows = await driver.query(
      `SELECT channel, COUNT(*) AS edits, SUM(added) AS added FROM ${datasource} GROUP BY channel ORDER BY SUM(added) DESC`,
      [],
    );
    assertEq('rows', rows, [
      { channel: '#en', edits: 6, added: 44 },
      { channel: '#fr', edits: 3, added: 23 },
      { channel: '#de', edits: 3, added: 20 },
    ]);
  });

  await check('cube SQL parameters', async () => {
    const rows = await driver.query(`SELECT COUNT(*) AS edits FROM ${datasource} WHERE channel = ?`, ['#fr']);
    assertEq('rows', rows, [{ edits: 3 }]);
  });

  await check('cube INFORMATION_SCHEMA', async () => {
    // tablesSchema is what Cube's schema introspection reads: every column of
    // every table outside INFORMATION_SCHEMA and sys, by schema and table.
    const schema = await driver.tablesSchema();
    const cols = (schema.druid || {})[datasource];
    if (!cols) throw new Error(`no druid.${datasource} in ${JSON.stringify(Object.keys(schema))}: ${JSON.stringify(schema)}`);
    const byName = {};
    for (const c of cols) byName[c.name] = c.type;
    assertEq('columns', sortKeys(byName), {
      __time: 'TIMESTAMP', added: 'BIGINT', channel: 'VARCHAR', deleted: 'BIGINT', page: 'VARCHAR', user: 'VARCHAR',
    });
  });
}

// pydruid's DB-API (pydruid/db/api.py, through python-requests) POSTs the
// statement as JSON to /druid/v2/sql/ and reads the first object row as the
// column description when it asked for a header. The bytes are what
// requests sends: its default headers, and json.dumps' ", " and ": "
// separators in the dict's order.
function pythonJSON(v) {
  if (Array.isArray(v)) return '[' + v.map(pythonJSON).join(', ') + ']';
  if (v && typeof v === 'object') {
    return '{' + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ': ' + pythonJSON(x)).join(', ') + '}';
  }
  return JSON.stringify(v);
}

function pydruidPost(base, payload) {
  const body = Buffer.from(pythonJSON(payload));
  return new Promise((ok, fail) => {
    const req = http.request(
      {
        host: base.hostname, port: base.port, method: 'POST', path: '/druid/v2/sql/',
        headers: {
          'User-Agent': 'python-requests/2.32.3', 'Accept-Encoding': 'gzip, deflate', Accept: '*/*',
          Connection: 'keep-alive', 'Content-Type': 'application/json', 'Content-Length': body.length,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          let b = Buffer.concat(chunks);
          const enc = res.headers['content-encoding'];
          if (enc === 'gzip') b = zlib.gunzipSync(b);
          else if (enc === 'deflate') b = zlib.inflateSync(b);
          ok({ status: res.statusCode, text: b.toString('utf8') });
        });
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

async function pydruidChecks(base) {
  await check('pydruid DB-API exchange', async () => {
    const { status, text } = await pydruidPost(base, {
      query: `SELECT __time, "user", added FROM ${datasource} WHERE channel = '#fr' ORDER BY __time`,
      context: {},
      header: true,
      typesHeader: true,
      sqlTypesHeader: true,
      resultFormat: 'object',
    });
    if (status !== 200) throw new Error(`HTTP ${status}: ${text}`);
    const [header, ...rows] = JSON.parse(text);
    // pydruid's get_description_from_row: names and types from the header row.
    const description = Object.entries(header).map(([name, t]) => [name, t.type, t.sqlType]);
    assertEq('description', description, [
      ['__time', 'LONG', 'TIMESTAMP'],
      ['user', 'STRING', 'VARCHAR'],
      ['added', 'LONG', 'BIGINT'],
    ]);
    assertEq('rows', rows, [
      { __time: '2026-01-01T00:40:00.000Z', user: 'carol', added: 5 },
      { __time: '2026-01-01T01:30:00.000Z', user: 'carol', added: 12 },
      { __time: '2026-01-01T02:20:00.000Z', user: 'frank', added: 6 },
    ]);
  });
}

// Grafana's Druid data source (grafadruid-druid-datasource) talks to Druid
// from its Go backend through go-druid: "Save & test" reads /status into a
// struct of Go ints, the data source picker lists /druid/v2/datasources, a
// native query goes to POST /druid/v2 and a SQL query to POST /druid/v2/sql
// with go-druid's SQL body (queryType "sql", the plugin's context with
// sqlOuterLimit 2000, resultFormat "array", header). The bytes are what
// Go's net/http and encoding/json send (compact JSON, struct field order).
function goRequest(base, method, path, payload) {
  const body = payload === undefined ? undefined : Buffer.from(JSON.stringify(payload));
  const headers = { 'User-Agent': 'Go-http-client/1.1', Accept: 'application/json', 'Accept-Encoding': 'gzip' };
  if (body) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = body.length;
  }
  return new Promise((ok, fail) => {
    const req = http.request({ host: base.hostname, port: base.port, method, path, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        let b = Buffer.concat(chunks);
        if (res.headers['content-encoding'] === 'gzip') b = zlib.gunzipSync(b);
        const text = b.toString('utf8');
        if (res.statusCode !== 200) return fail(new Error(`${method} ${path}: HTTP ${res.statusCode}: ${text}`));
        try {
          ok(JSON.parse(text));
        } catch (e) {
          fail(new Error(`${method} ${path}: not JSON: ${text.slice(0, 200)}`));
        }
      });
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(body);
  });
}

async function grafanaChecks(base) {
  await check('grafana go-druid exchange', async () => {
    const status = await goRequest(base, 'GET', '/status');
    // go-druid's Status: version a string, the memory figures Go ints
    // (a float would fail its decoding, and with it "Save & test").
    if (typeof status.version !== 'string' || !/^\d+\.\d+\.\d+/.test(status.version)) {
      throw new Error(`/status version ${JSON.stringify(status.version)}`);
    }
    for (const k of ['maxMemory', 'totalMemory', 'freeMemory', 'usedMemory', 'directMemory']) {
      if (!Number.isInteger(status.memory && status.memory[k])) throw new Error(`/status memory.${k} is not an integer: ${JSON.stringify(status.memory)}`);
    }
    const list = await goRequest(base, 'GET', '/druid/v2/datasources');
    if (!Array.isArray(list) || !list.includes(datasource)) throw new Error(`datasources: ${JSON.stringify(list)}`);
    const hours = await goRequest(base, 'POST', '/druid/v2', {
      queryType: 'timeseries',
      dataSource: { type: 'table', name: datasource },
      intervals: { type: 'intervals', intervals: ['2026-01-01T00:00:00.000Z/2026-01-02T00:00:00.000Z'] },
      context: {},
      granularity: 'hour',
      aggregations: [{ type: 'count', name: 'count' }],
    });
    assertEq('hours', hours, [
      { timestamp: '2026-01-01T00:00:00.000Z', result: { count: 3 } },
      { timestamp: '2026-01-01T01:00:00.000Z', result: { count: 4 } },
      { timestamp: '2026-01-01T02:00:00.000Z', result: { count: 5 } },
    ]);
    const rows = await goRequest(base, 'POST', '/druid/v2/sql', {
      queryType: 'sql',
      context: { sqlOuterLimit: 2000 },
      query: `SELECT channel, COUNT(*) AS edits FROM ${datasource} GROUP BY channel ORDER BY channel`,
      resultFormat: 'array',
      header: true,
    });
    assertEq('sql rows', rows, [['channel', 'edits'], ['#de', 3], ['#en', 6], ['#fr', 3]]);
  });
}

await new Promise((ok) => proxy.listen(0, '127.0.0.1', ok));
const base = new URL(`http://127.0.0.1:${proxy.address().port}`);
try {
  await plywoodChecks(base);
  await cubeChecks(base);
  await pydruidChecks(base);
  await grafanaChecks(base);
} finally {
  proxy.close();
}
process.exit(failed ? 1 : 0);
