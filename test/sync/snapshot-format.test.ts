// The snapshot's lines: what the API writes reads back as the same header, zone JSON and count;
// anything else is refused.
import { describe, expect, it } from 'vitest';
import { endLine, headerLine, parseSnapshotLine, zoneLine } from '../../src/sync/snapshot-format.ts';

const read = (line: string) => parseSnapshotLine(line.trimEnd());

describe('snapshot lines', () => {
  it('round-trip header, zone (its JSON untouched) and end', () => {
    const header = { revision: 7, nodesRevision: 3, nodes: [{ id: 1, name: 'fra1', ipv4: '192.0.2.1', ipv6: null, location: 'DE', status: 'active' as const }] };
    expect(read(headerLine(header))).toEqual({ kind: 'header', header });
    const json = '{"domain":{"domain":"a.example"},"records":[{"value":"x}"}]}';
    expect(read(zoneLine(json))).toEqual({ kind: 'zone', json });
    expect(read(endLine(42))).toEqual({ kind: 'end', zones: 42 });
    expect(headerLine(header).endsWith('\n') && zoneLine(json).endsWith('\n') && endLine(1).endsWith('\n')).toBe(true);
  });

  it('refuses lines of no known kind, or with missing fields', () => {
    expect(() => read('{"snapshot":{"revision":1,"nodes_revision":0}}')).toThrow(/unexpected line/);
    expect(() => read('{"end":{}}')).toThrow(/unexpected line/);
    expect(() => read('{"other":1}')).toThrow(/unexpected line/);
    expect(() => read('not json')).toThrow();
  });
});
