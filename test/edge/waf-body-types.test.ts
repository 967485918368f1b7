// What a body is by its declared type (waf/body-types.ts) and which uploads a server would run
// (waf/uploads.ts), pure: magic numbers checked against the declared type, not sniffed alone;
// charsets; executable names as servers store them; code behind a magic number, in linear time.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readBody } from '../../src/edge/waf/body-parse.ts';
import { firstFinding } from '../../src/edge/waf/inspect.ts';
import { wafSettings } from '../../src/edge/waf/settings.ts';
import { mediaType, skippableBinary, unreadableEncoding } from '../../src/edge/waf/body-types.ts';
import { codeBehindMagic, serverExecutableName } from '../../src/edge/waf/uploads.ts';

const bytes = (...parts: Array<number[] | string>) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

describe('body types', () => {
  it('skips content only when it is the binary type it declares', () => {
    const pngHead = bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], randomBytes(100).toString('latin1'));
    expect(skippableBinary('image/png', pngHead)).toBe(true);
    expect(skippableBinary('image/jpeg', pngHead)).toBe(true); // an image all the same
    expect(skippableBinary('application/pdf', pngHead)).toBe(false);
    expect(skippableBinary('text/plain', pngHead)).toBe(false);
    expect(skippableBinary('application/x-www-form-urlencoded', pngHead)).toBe(false);
    // Two letters are not a bitmap; RIFF is not a WebP without its form type.
    expect(skippableBinary('image/bmp', bytes('BMI=22&comment=<script>alert(1)</script>'))).toBe(false);
    const bmp = Buffer.alloc(60);
    bmp.write('BM', 0, 'latin1');
    bmp.writeUInt32LE(60, 2);
    bmp.writeUInt32LE(54, 10);
    bmp.writeUInt32LE(40, 14);
    expect(skippableBinary('image/bmp', bmp)).toBe(true);
    expect(skippableBinary('image/webp', bytes('RIFF1234<script>alert(1)</script>'))).toBe(false);
    expect(skippableBinary('image/webp', bytes('RIFF', [1, 2, 0, 0], 'WEBPVP8 '))).toBe(true);
    // Types that name no format: binary by their bytes.
    expect(skippableBinary('application/octet-stream', randomBytes(2000))).toBe(true);
    expect(skippableBinary('application/octet-stream', bytes('id,name\n1,Jane\n'))).toBe(false);
    expect(skippableBinary('application/vnd.api+json', randomBytes(2000))).toBe(false);
    expect(skippableBinary('audio/mpeg', bytes([0xff, 0xe3, 0x18, 0xc4, 0, 0, 0, 0x03, 0x48, 0, 0, 0]))).toBe(true); // MPEG 2.5, no ID3
    expect(skippableBinary('image/jxl', randomBytes(2000))).toBe(true);
    // SVG is XML (and scripts): always read.
    expect(skippableBinary('image/svg+xml', bytes('<svg onload=alert(1)>', [0, 0, 0, 0, 0, 0]))).toBe(false);
  });

  it('reads forms, JSON and text whatever their first bytes; NUL bytes are data', () => {
    const form = readBody(bytes('BMI=22&comment=%3Cscript%3E', [0]), 'application/x-www-form-urlencoded');
    expect(form.inputs.map((i) => i.value)).toContain('%3Cscript%3E\0');
    expect(readBody(bytes('GIF89a hello'), 'text/plain').inputs[0]!.value).toBe('GIF89a hello');
    expect(readBody(bytes([0x89], 'PNG hello'), 'image/png').inputs).toEqual([]);
    // UTF-16 with its BOM is read decoded (and refused after the rules, unless an uploaded file).
    const wide = readBody(Buffer.concat([bytes([0xff, 0xfe]), Buffer.from('{"q":"<b>"}', 'utf16le')]), 'application/json');
    expect(wide.inputs.map((i) => i.value)).toContain('<b>');
    expect(wide.refusals).toMatchObject([{ status: 415, rule: 920480 }]);
    const file = bytes('--b\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n', [0xff, 0xfe], Buffer.from('Name\tCity', 'utf16le').toString('latin1'), '\r\n--b--\r\n');
    const upload = readBody(file, 'multipart/form-data; boundary=b');
    expect(upload.inputs.map((i) => i.value)).toContain('Name\tCity');
    expect(upload.refusals).toEqual([]);
  });

  it('reads a long text body to its end: an attack on a line past the first 256 KiB and 2,000 lines is found', () => {
    const settings = wafSettings({ waf_level: 1 });
    const rows = Array.from({ length: 8000 }, (_, i) => `${i},widget ${i},blue,12.50,in stock`);
    for (const attack of ["1' UNION SELECT username, password FROM users --", '<script>alert(document.cookie)</script>', '; cat /etc/passwd']) {
      for (const at of [7999, 7000, 2001]) {
        const lines = [...rows];
        lines[at] = attack;
        for (const type of ['text/plain', 'text/csv']) {
          const read = readBody(Buffer.from(lines.join('\n')), type);
          expect(firstFinding(read.inputs, '/import', settings), `${type}, line ${at}: ${attack}`).toBeDefined();
        }
      }
    }
    // A payload across a window's end, on one very long line (no line start to begin at): whole in the overlap.
    const long = `${'a'.repeat(256 * 1024 - 20)} <script>alert(document.cookie)</script> ${'b'.repeat(100_000)}`;
    expect(firstFinding(readBody(Buffer.from(long), 'text/plain').inputs, '/', settings)).toBeDefined();
    // The ordinary rows alone pass.
    expect(firstFinding(readBody(Buffer.from(rows.join('\n')), 'text/csv').inputs, '/import', settings)).toBeUndefined();
  });

  it('refuses charsets outside the allow-list and JSON not in UTF-8', () => {
    expect(mediaType('Application/JSON; Charset="UTF-8"')).toEqual({ type: 'application/json', charset: 'utf-8' });
    expect(unreadableEncoding('text/plain', 'ibm037', bytes('x'))).toMatch(/charset ibm037/);
    expect(unreadableEncoding('application/json', 'iso-8859-1', bytes('{}'))).toMatch(/only UTF-8/);
    expect(unreadableEncoding('application/json', undefined, Buffer.from('{"a":1}', 'utf16le'))).toMatch(/UTF-16/);
    expect(unreadableEncoding('text/plain', undefined, bytes([0xfe, 0xff, 0, 0x41]))).toMatch(/BOM/);
    for (const charset of [undefined, 'utf-8', 'iso-8859-1', 'iso-8859-15', 'windows-1252', 'us-ascii']) expect(unreadableEncoding('application/x-www-form-urlencoded', charset, bytes('a=1', [0]))).toBeUndefined();
    expect(unreadableEncoding('application/octet-stream', undefined, bytes([0xff, 0xfe, 0, 0]))).toBeUndefined();
  });
});

describe('uploads', () => {
  it('knows the names servers run, as they store them', () => {
    for (const name of ['shell.php', 'x.pHp5', 'a.phtml', 'a.phar', 'a.jsp', 'a.asp', 'a.aspx', 'a.cgi', '.htaccess', 'sub/.user.ini', 'web.config', 'shell.php.', 'shell.php ', 'shell.asp;.jpg', 'shell.php\0.jpg', 'C:\\up\\x.PHP']) expect(serverExecutableName(name), name).toBe(true);
    for (const name of ['photo.jpg', 'notes.php.txt', 'php.png', 'report.pdf', 'htaccess.txt', 'my.user.ini.bak', 'asp-guide.pdf']) expect(serverExecutableName(name), name).toBe(false);
  });

  it('finds server code behind a magic number, not in binary noise; linear on adversarial input', () => {
    expect(codeBehindMagic(bytes("GIF89a;<?php system($_GET['c']); ?>"), true)).toBe(true);
    expect(codeBehindMagic(bytes('%PDF-1.4 <%@ page import="java.io.*" %>'), false)).toBe(true);
    expect(codeBehindMagic(Buffer.concat([bytes([0xff, 0xd8, 0xff, 0xe1]), randomBytes(5000), bytes('<?php eval($_POST[1]);')]), true)).toBe(true);
    for (let i = 0; i < 20; i++) expect(codeBehindMagic(randomBytes(200_000), true)).toBe(false);
    const adversarial = Buffer.from('<?'.repeat(2 * 1024 * 1024));
    const started = performance.now();
    expect(codeBehindMagic(adversarial, true)).toBe(false);
    // Linear: 4 MiB of "<?" is a few hundred milliseconds at most even on a loaded machine, not minutes.
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});
