// The watch over a body's rest past the inspection limit (waf/body-tail.ts), pure: delimiters
// split across chunks, a part straddling the limit, bounded memory per part, a text body's end.
import { describe, expect, it } from 'vitest';
import { bodyTail, PART_BYTES } from '../../src/edge/waf/body-tail.ts';
import { firstFinding } from '../../src/edge/waf/inspect.ts';
import type { BodyRead } from '../../src/edge/waf/body-parse.ts';
import { wafSettings } from '../../src/edge/waf/settings.ts';

const refuses = (read: BodyRead) => firstFinding(read.inputs, '/', wafSettings(undefined)) !== undefined;
const attack = "1' UNION SELECT password FROM users-- -";
const part = (name: string, content: string | Buffer, filename?: string) =>
  Buffer.concat([Buffer.from(`--bnd\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n`), Buffer.from(content), Buffer.from('\r\n')]);
const binary = Buffer.alloc(300_000, 0x89);

/** Feeds `rest` in chunks of `size` after `prefix`; true once refused. */
function watch(prefix: Buffer, rest: Buffer, size: number, type = 'multipart/form-data; boundary=bnd'): boolean {
  const tail = bodyTail(prefix, prefix.length, type, refuses);
  if (!tail) return false;
  for (let at = 0; at < rest.length; at += size) if (tail.chunk(rest.subarray(at, at + size))) return true;
  return tail.end();
}

describe('body tail', () => {
  it('reads every part after the limit, whatever the chunking (delimiters split across chunks)', () => {
    const prefix = part('file', binary.subarray(0, 1000), 'a.bin');
    const rest = Buffer.concat([binary.subarray(1000), Buffer.from('\r\n'), part('q', attack), Buffer.from('--bnd--\r\n')]);
    for (const size of [1, 7, 64, 65_536]) expect(watch(prefix, rest, size), `chunks of ${size}`).toBe(true);
    const clean = Buffer.concat([binary.subarray(1000), Buffer.from('\r\n'), part('q', 'holiday photos'), Buffer.from('--bnd--\r\n')]);
    for (const size of [1, 7, 65_536]) expect(watch(prefix, clean, size), `clean, chunks of ${size}`).toBe(false);
  });

  it('reads again whole the part that straddles the limit', () => {
    const whole = Buffer.concat([part('file', binary, 'a.bin'), part('q', `${'x '.repeat(50)}${attack}`), Buffer.from('--bnd--\r\n')]);
    const cut = whole.indexOf('UNION');
    expect(watch(whole.subarray(0, cut), whole.subarray(cut), 4096)).toBe(true);
  });

  it('keeps at most PART_BYTES of a part, and reads file names after the limit', () => {
    const huge = Buffer.concat([part('notes', 'a '.repeat(PART_BYTES) + attack), Buffer.from('--bnd--\r\n')]);
    // The attack sits past what is kept of that part: not read (bounded memory), and nothing breaks.
    expect(watch(Buffer.alloc(0), huge, 65_536)).toBe(false);
    const named = Buffer.concat([part('f', 'x', '../../etc/passwd'), Buffer.from('--bnd--\r\n')]);
    expect(watch(Buffer.from('--bnd\r\n'), named, 3)).toBe(true);
  });

  it("reads a text body's last part at its end; binary bodies have nothing to watch", () => {
    const text = Buffer.from(`${'lorem ipsum '.repeat(20_000)}\n${attack}`);
    expect(watch(text.subarray(0, 1000), text.subarray(1000), 8192, 'text/plain')).toBe(true);
    expect(watch(text.subarray(0, 1000), Buffer.from('lorem ipsum '.repeat(20_000)), 8192, 'text/plain')).toBe(false);
    expect(bodyTail(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0]), 6, 'image/png', refuses)).toBeUndefined();
  });

  it('reads what was read past the limit before the watch began (the bytes handed back beyond the inspected ones)', () => {
    const whole = Buffer.concat([part('file', binary, 'a.bin'), part('q', attack), part('r', 'x'), Buffer.from('--bnd--\r\n')]);
    // All of it was read at once, only the first 1000 bytes were inspected.
    const tail = bodyTail(whole, 1000, 'multipart/form-data; boundary=bnd', refuses)!;
    expect(tail.end()).toBe(false);
    let found = false;
    bodyTail(whole, 1000, 'multipart/form-data; boundary=bnd', (inputs) => (found ||= refuses(inputs)));
    expect(found).toBe(true);
  });
});
