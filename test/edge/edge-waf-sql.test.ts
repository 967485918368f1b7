// SQL injection read as a parser reads SQL, through a real edge at level 1: select lists with
// concatenation and aliases (PortSwigger's lab payloads), MySQL executable comments holding
// percent-encoded keywords in every placement, PostgreSQL's JSON operators and COPY … PROGRAM,
// a payload split between the query and a form body under one name (ASP.NET joins them), and
// SQL that backticks do not hide (MySQL quotes identifiers with them; a Markdown code span in
// prose is still text a query receives). The ordinary requests that look like them pass.
// Refused requests never reach the backend.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { multipart } from '../helpers/waf-corpus.ts';
import { form, json, part, query, WafEdge, type Sent } from '../helpers/waf-edge.ts';

let edge: WafEdge;
const HOST = 'sql.example';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The value in a query, a form, JSON and a multipart field. */
const everywhere = (name: string, value: string): Array<[string, Sent]> => [
  [`query ${value}`, query(name, value)],
  [`form ${value}`, form({ [name]: value })],
  [`JSON ${value}`, json({ [name]: value })],
  [`multipart ${value}`, part(name, value)],
];

const expectRefused = (cases: Array<[string, Sent]>) => edge.expectRefused(cases, HOST);
const expectPassed = (cases: Array<[string, Sent]>) => edge.expectPassed(cases, HOST);

beforeAll(async () => {
  edge = await WafEdge.start([{ domain: HOST }]);
}, 150_000);

afterAll(() => edge?.stop());

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
