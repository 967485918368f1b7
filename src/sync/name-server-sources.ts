// Where a name server's feed comes from, in one shape for both: a snapshot as parts (header,
// zones, end — and, from the API, the bytes as received, for the local state to keep), pages of
// changes (change-page.ts: the same page either way), and one zone whole.
//   store (the serve role): read in this process, every domain passed through the name server's
//   view (signing keys opened, name-server-domain.ts);
//   HTTP (the dns role): GET /sync/snapshot (streamed), /sync/changes?v=2 (settings changes as
//   the domain alone), /sync/zones/{name}; the API applies the same view before sending.
import type { DomainState } from '../model/domain.ts';
import type { Store, Zone } from '../store/types.ts';
import { LineSplitter } from '../common/ndjson.ts';
import { readChangePage, type ChangePage } from './change-page.ts';
import type { FeedSource } from './feed-consumer.ts';
import type { HttpFeed } from './http-source.ts';
import { parseSnapshotLine, type SnapshotHeader } from './snapshot-format.ts';
import { storeSourceParts } from './store-source.ts';

const STORE_PAGE = 10_000;

export type ZoneSnapshotPart =
  | { kind: 'header'; header: SnapshotHeader }
  /** `offset`: where its line starts in the bytes received (HTTP only). */
  | { kind: 'zone'; zone: Zone; offset?: number }
  /** The snapshot's bytes as received, before the parts read from them. */
  | { kind: 'bytes'; chunk: Uint8Array }
  | { kind: 'end'; zones: number };

/** Parts in order: the header, zones, the end line; bytes (HTTP) before what is read from them. */
export type ZoneSnapshot = Iterable<ZoneSnapshotPart> | AsyncIterable<ZoneSnapshotPart>;

export interface NameServerSource extends FeedSource<ChangePage, ZoneSnapshot> {
  /** One zone as it now is (undefined: gone). */
  zone(name: string): Promise<Zone | undefined>;
}

type DomainView = (domain: DomainState) => DomainState;

export function nameServerStoreSource(store: Store, pollMs: number, domainView: DomainView): NameServerSource {
  const zoneView = (zone: Zone): Zone => (zone.domain.signing === undefined ? zone : { ...zone, domain: domainView(zone.domain) });
  return {
    who: 'sync',
    ...storeSourceParts(store, pollMs),
    snapshot: async () => {
      const snap = await store.snapshot();
      return (function* (): Generator<ZoneSnapshotPart> {
        yield { kind: 'header', header: { revision: snap.revision, nodes: snap.nodes, nodesRevision: snap.nodesRevision } };
        for (const zone of snap.zones) yield { kind: 'zone', zone: zoneView(zone) };
        yield { kind: 'end', zones: snap.zones.length };
      })();
    },
    changes: (since) => readChangePage(store, since, STORE_PAGE, { heads: true, domainView }),
    zone: async (name) => {
      const zone = await store.getZone(name);
      return zone && zoneView(zone);
    },
  };
}

export function nameServerHttpSource(http: HttpFeed): NameServerSource {
  return {
    who: 'sync',
    ...http.parts,
    snapshot: async () => streamedParts(await http.snapshot('/sync/snapshot')),
    // v=2: settings changes come as the domain alone, applied to the records held here.
    changes: (since) => http.changes<ChangePage>('/sync/changes?v=2', since),
    zone: (name) => http.document<Zone>(`/sync/zones/${encodeURIComponent(name)}`),
  };
}

async function* streamedParts(body: AsyncIterable<Uint8Array>): AsyncGenerator<ZoneSnapshotPart> {
  const splitter = new LineSplitter();
  const parts = function* (lines: Iterable<{ text: string; offset: number }>): Generator<ZoneSnapshotPart> {
    for (const line of lines) {
      const parsed = parseSnapshotLine(line.text);
      if (parsed.kind === 'zone') yield { kind: 'zone', zone: JSON.parse(parsed.json) as Zone, offset: line.offset };
      else yield parsed;
    }
  };
  for await (const chunk of body) {
    yield { kind: 'bytes', chunk };
    yield* parts(splitter.push(chunk));
  }
  yield* parts(splitter.end());
}
