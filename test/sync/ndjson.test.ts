// The NDJSON line splitter: lines split anywhere across chunks, multi-byte characters included,
// and each line's byte offset in the whole stream.
import { describe, expect, it } from 'vitest';
import { LineSplitter, type Line } from '../../src/common/ndjson.ts';

function split(bytes: Uint8Array, size: number): Line[] {
  const splitter = new LineSplitter();
  const out: Line[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(...splitter.push(bytes.subarray(i, i + size)));
  return [...out, ...splitter.end()];
}

describe('LineSplitter', () => {
  const text = '{"a":1}\n{"b":"Zürich ✓ 東京"}\n\n{"c":3}';
  const bytes = new TextEncoder().encode(text);

  it('yields the same lines and offsets whatever the chunk size, skipping empty lines', () => {
    const expected = [
      { text: '{"a":1}', offset: 0 },
      { text: '{"b":"Zürich ✓ 東京"}', offset: 8 },
      { text: '{"c":3}', offset: bytes.length - 7 },
    ];
    for (const size of [1, 2, 3, 5, 7, 64, bytes.length]) expect(split(bytes, size), `chunks of ${size}`).toEqual(expected);
  });

  it('offsets point at each line in the stored bytes', () => {
    for (const line of split(bytes, 4)) {
      const length = Buffer.byteLength(line.text);
      expect(Buffer.from(bytes.subarray(line.offset, line.offset + length)).toString('utf8')).toBe(line.text);
    }
  });

  it('keeps a final line without a newline', () => {
    expect(split(new TextEncoder().encode('x\ny'), 1).map((l) => l.text)).toEqual(['x', 'y']);
  });
});
