// Every WAF rule on an attack it is for and on a harmless text that looks a little like it.
import { describe, expect, it } from 'vitest';
import { ATTACK_RULES, decodedForms, inspect, protocolFinding, SCANNER_RULES } from '../../src/edge/waf/inspect.ts';

/** rule id → [an input it must match, an input it must not]. */
const SAMPLES: Record<number, [string, string]> = {
  942100: ["1 union all select password from users", 'the union was a great select of people'],
  942110: ['1 and sleep(15)', 'I need sleep (lots)'],
  942120: ['(select top 1 name from sysusers)', '(select one) from the list'],
  942130: ["1'; drop table users", 'done; drop by tomorrow'],
  942140: ['exec master.dbo.xp_cmdshell', 'the master bedroom'],
  942150: ["admin' or 'a'='a", "D'or 1st parfume"],
  942160: ['id=5 and 12=12', 'chapter 12 and 12 more'],
  942170: ["extractvalue(1,concat(0x7e,version()))", 'extract the value'],
  942180: ["admin'-- ", "it's -- so they say"],
  942190: ['select name from users where id=1', 'select the rows from the table'],
  941100: ['<script>alert(1)</script>', 'a script for the play'],
  941110: ['<x onmouseover=alert(1)>', 'only=1337 on the list'],
  941120: ['javascript:alert(1)', 'JavaScript: Basics of JavaScript Language'],
  941130: ['<img src=x>', 'an img of the source'],
  941140: ['alert(document.domain)', 'an alert was raised'],
  941150: ['document.cookie', 'a document about cookies'],
  941160: ["setInterval('ale'+'rt(1)')", 'set an interval'],
  941170: ["'-alert(1)//", "it's alert"],
  932100: ['; cat /etc/hosts', 'cat and dog'],
  932110: ['$(id)', 'costs $ 5 (each)'],
  932120: ['() { :; }; echo', '() {} empty'],
  932130: ['/bin/bash -c id', 'the bin is bashed'],
  932140: ['--exec=`id`', 'exec noun'],
  932150: ['!!python/object/new:exec', 'python objects'],
  930100: ['../../etc/passwd', 'one..two'],
  930110: ['/etc/shadow', 'etc and shadows'],
  930120: ['\\\\host\\c$\\windows', 'c$ money'],
  930130: ['php://filter/resource=index', 'php filter tips'],
  934100: ['<!--#exec cmd="ls" -->', '<!-- a comment -->'],
  934110: ['{{1337*1338}}', '{{ name }}'],
  934120: ['<!DOCTYPE x [ <!ENTITY y SYSTEM "file:///etc/passwd"> ]>', '<!doctype html>'],
  934130: ['*(|(objectclass=*))', '(a) and (b)'],
  934140: ["true, $where: '1 == 1'", 'where is the $ sign'],
  921110: ['\r\nRCPT TO: a@evil.example\r\n', 'rcpt to me please'],
  921100: ['a\r\nSet-Cookie: x=1', 'a set-cookie header'],
};

describe('WAF rules', () => {
  it('has a sample for every rule', () => {
    expect(ATTACK_RULES.map((r) => r.id).filter((id) => !(id in SAMPLES))).toEqual([]);
  });

  for (const rule of ATTACK_RULES) {
    it(`${rule.id} ${rule.description}`, () => {
      const [attack, harmless] = SAMPLES[rule.id]!;
      expect(decodedForms(attack).some((f) => rule.pattern.test(f)), attack).toBe(true);
      expect(decodedForms(harmless).some((f) => rule.pattern.test(f)), harmless).toBe(false);
      // Plain text (letters, digits, - _ . /) is tried against the plain rules only: a rule whose
      // attack is plain text must be one.
      for (const form of decodedForms(attack)) if (/^[a-z0-9\-_./]*$/.test(form) && rule.pattern.test(form)) expect(rule.plain, form).toBe(true);
    });
  }

  it('913100 scanner user agents', () => {
    const [rule] = SCANNER_RULES;
    expect(rule!.pattern.test('sqlmap/1.7.2#stable (https://sqlmap.org)'.toLowerCase())).toBe(true);
    expect(rule!.pattern.test('mozilla/5.0 (x11; linux x86_64) applewebkit/537.36 headlesschrome/120.0')).toBe(false);
  });

  it('decodes what attackers encode: percent (twice), entities, NUL, base64', () => {
    expect(inspect('GET', '/?q=%253Cscript%253E', {})).toMatchObject({ rule: 941100 });
    expect(inspect('GET', '/?q=%26lt%3Bscript%26gt%3B', {})).toMatchObject({ rule: 941100 });
    expect(inspect('GET', `/?q=${Buffer.from("' union select 1,2").toString('base64')}`, {})).toMatchObject({ class: 'sqli' });
    expect(inspect('POST', '/', { 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ a: { b: ['<svg onload=alert(1)>'] } })))).toMatchObject({ class: 'xss', where: 'body' });
    expect(inspect('GET', '/articles/2024/how-to-select-a-union?page=2&sort=date', { cookie: 'session=abc123; theme=dark' })).toBeUndefined();
    expect(inspect('POST', '/comment', { 'content-type': 'application/x-www-form-urlencoded' }, Buffer.from('text=Line+one%0D%0ALine+two'))).toBeUndefined();
  });

  it('protocol checks: methods, encoding, NUL, framing', () => {
    expect(protocolFinding('PROPFIND', '/', {}, 2)).toMatchObject({ status: 405 });
    expect(protocolFinding('GET', '/%zz', {}, 2)).toMatchObject({ status: 400 });
    expect(protocolFinding('GET', '/a%00.php', {}, 2)).toMatchObject({ status: 400 });
    expect(protocolFinding('POST', '/', { 'content-length': '1', 'transfer-encoding': 'chunked' }, 3)).toMatchObject({ status: 400 });
    expect(protocolFinding('GET', `/${'a'.repeat(9000)}`, {}, 2)).toMatchObject({ status: 414 });
    expect(protocolFinding('GET', '/ok?x=%41', {}, 2)).toBeUndefined();
  });
});
