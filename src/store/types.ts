// The Store contract: what the API, the CLI and the sync producer need from persistence, one
// part per resource (contract/*.ts), joined here. Adapters (lmdb/, redis/) implement it, one file
// per part; test/store/contract/ checks any adapter.
//
// Rules every adapter keeps:
// - Every mutation commits atomically together with a new global revision (strictly increasing
//   by one) and a change entry naming what changed at that revision.
// - A mutation callback runs against the current state inside the atomic step and may throw an
//   ApiError to reject the change; it must not have side effects (an adapter may run it again).
// - A promise resolves only once the write is durable under the adapter's documented guarantee.
import type { CertificateStore } from './contract/certificates.ts';
import type { ChangeFeedStore } from './contract/change-feed.ts';
import type { ConsumerStore } from './contract/consumers.ts';
import type { DocumentStore } from './contract/documents.ts';
import type { IpListStore } from './contract/iplists.ts';
import type { NodeStore } from './contract/nodes.ts';
import type { UptimeStore } from './contract/uptime.ts';
import type { UserStore } from './contract/users.ts';
import type { ZoneStore } from './contract/zones.ts';

export type { MutationContext, Page, PageRequest } from './contract/common.ts';
export type { UserPatch, UserStore } from './contract/users.ts';
export type { ClaimRef, RecordChangeSet, RecordDelta, RecordEdit, RecordMutation, RecordView, Zone, ZoneHead, ZoneMutation, ZoneStore } from './contract/zones.ts';
export type { IpEntryChange, IpListMutation, IpListStore, IpListSummary } from './contract/iplists.ts';
export type { NodeStore } from './contract/nodes.ts';
export type { ConsumerState, ConsumerStore } from './contract/consumers.ts';
export { CHANGES_MAX_BYTES, isRecordChange } from './contract/change-feed.ts';
export type { Change, ChangeFeedStore, ChangeKind, Snapshot, SnapshotChunk } from './contract/change-feed.ts';
export type { CertificateStore } from './contract/certificates.ts';
export type { UptimePoint, UptimeRow, UptimeStore } from './contract/uptime.ts';
export type { DocKind, DocumentStore } from './contract/documents.ts';

export interface Store extends UserStore, ZoneStore, IpListStore, NodeStore, ConsumerStore, ChangeFeedStore, CertificateStore, UptimeStore, DocumentStore {
  readonly kind: string;
  close(): Promise<void>;
}
