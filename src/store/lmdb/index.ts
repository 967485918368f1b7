// The embedded store: LMDB on local disk, no server to run. Composed of a core (core.ts: the
// environment, keys, the atomic commit, the overlap check) and one part per resource; each
// method of the Store contract is answered by the part named beside it.
import type { Store } from '../types.ts';
import { LmdbCertificates } from './certificates.ts';
import { LmdbChangeFeed } from './change-feed.ts';
import { LmdbConsumers } from './consumers.ts';
import { LmdbCore, type EmbeddedStoreOptions } from './core.ts';
import { OffThreadCommits } from './off-thread.ts';
import { LmdbDocuments } from './documents.ts';
import { LmdbIpLists } from './iplists.ts';
import { LmdbNodes } from './nodes.ts';
import { LmdbUptime } from './uptime.ts';
import { LmdbUsers } from './users.ts';
import { LmdbZones } from './zones.ts';
import { storeWriteError } from './write-error.ts';

export type { EmbeddedStoreOptions } from './core.ts';

/**
 * Change sets of this many records and more are committed in the store's own thread: below, the
 * transaction takes a few milliseconds (about 25 µs a record), less than handing it over.
 */
const OFF_THREAD_FROM = 500;

export class EmbeddedStore implements Store {
  readonly kind = 'embedded';
  private readonly core: LmdbCore;
  private readonly users: LmdbUsers;
  private readonly zones: LmdbZones;
  private readonly ipLists: LmdbIpLists;
  private readonly nodes: LmdbNodes;
  private readonly consumers: LmdbConsumers;
  private readonly feed: LmdbChangeFeed;
  private readonly certificates: LmdbCertificates;
  private readonly uptime: LmdbUptime;
  private readonly documents: LmdbDocuments;
  private readonly offThread: OffThreadCommits;

  constructor(options: EmbeddedStoreOptions) {
    this.core = new LmdbCore(options);
    this.offThread = new OffThreadCommits(options);
    this.users = new LmdbUsers(this.core);
    this.zones = new LmdbZones(this.core);
    this.ipLists = new LmdbIpLists(this.core);
    this.nodes = new LmdbNodes(this.core);
    this.consumers = new LmdbConsumers(this.core);
    this.feed = new LmdbChangeFeed(this.core);
    this.certificates = new LmdbCertificates(this.core);
    this.uptime = new LmdbUptime(this.core.db.openDB({ name: 'uptime' }), storeWriteError);
    this.documents = new LmdbDocuments(this.core);
    // Data written by earlier releases is brought to the current layout once, at open.
    this.zones.splitZoneDocuments();
    this.ipLists.splitIpLists();
    this.zones.indexZoneTree();
  }

  // ---- users and keys (users.ts)
  createUser: Store['createUser'] = (...a) => this.users.createUser(...a);
  getUser: Store['getUser'] = (...a) => this.users.getUser(...a);
  updateUser: Store['updateUser'] = (...a) => this.users.updateUser(...a);
  deleteUser: Store['deleteUser'] = (...a) => this.users.deleteUser(...a);
  listUsers: Store['listUsers'] = () => this.users.listUsers();
  addApiKey: Store['addApiKey'] = (...a) => this.users.addApiKey(...a);
  findApiKeyByHash: Store['findApiKeyByHash'] = (...a) => this.users.findApiKeyByHash(...a);
  listApiKeys: Store['listApiKeys'] = (...a) => this.users.listApiKeys(...a);
  revokeApiKey: Store['revokeApiKey'] = (...a) => this.users.revokeApiKey(...a);

  // ---- zones, records and claims (zones.ts)
  createZone: Store['createZone'] = (...a) => this.zones.createZone(...a);
  getZone: Store['getZone'] = (...a) => this.zones.getZone(...a);
  getZoneHead: Store['getZoneHead'] = (...a) => this.zones.getZoneHead(...a);
  getRecord: Store['getRecord'] = (...a) => this.zones.getRecord(...a);
  getRecordsAt: Store['getRecordsAt'] = (...a) => this.zones.getRecordsAt(...a);
  listClaims: Store['listClaims'] = (...a) => this.zones.listClaims(...a);
  pendingClaimsUnder: Store['pendingClaimsUnder'] = (...a) => this.zones.pendingClaimsUnder(...a);
  proveClaim: Store['proveClaim'] = (...a) => this.zones.proveClaim(...a);
  listZones: Store['listZones'] = (...a) => this.zones.listZones(...a);
  countZones: Store['countZones'] = (...a) => this.zones.countZones(...a);
  listAllZones: Store['listAllZones'] = (...a) => this.zones.listAllZones(...a);
  updateZone: Store['updateZone'] = (...a) => this.zones.updateZone(...a);
  changeRecords: Store['changeRecords'] = (...a) => this.zones.changeRecords(...a);
  applyRecordChangeSet: Store['applyRecordChangeSet'] = async (name, ownerId, change) => {
    if (change.create.length + change.put.length + change.del.length < OFF_THREAD_FROM) return this.zones.applyRecordChangeSet(name, ownerId, change);
    const result = await this.offThread.apply(name, ownerId, change);
    if (result !== 'moved') this.core.notifyCommitted(true);
    return result;
  };
  deleteZone: Store['deleteZone'] = (...a) => this.zones.deleteZone(...a);

  // ---- IP lists (iplists.ts)
  createIpList: Store['createIpList'] = (...a) => this.ipLists.createIpList(...a);
  getIpList: Store['getIpList'] = (...a) => this.ipLists.getIpList(...a);
  listIpLists: Store['listIpLists'] = (...a) => this.ipLists.listIpLists(...a);
  listAllIpLists: Store['listAllIpLists'] = (...a) => this.ipLists.listAllIpLists(...a);
  countIpLists: Store['countIpLists'] = (...a) => this.ipLists.countIpLists(...a);
  updateIpList: Store['updateIpList'] = (...a) => this.ipLists.updateIpList(...a);
  changeIpEntries: Store['changeIpEntries'] = (...a) => this.ipLists.changeIpEntries(...a);
  deleteIpList: Store['deleteIpList'] = (...a) => this.ipLists.deleteIpList(...a);

  // ---- edge nodes (nodes.ts)
  createNode: Store['createNode'] = (...a) => this.nodes.createNode(...a);
  getNode: Store['getNode'] = (...a) => this.nodes.getNode(...a);
  listNodes: Store['listNodes'] = () => this.nodes.listNodes();
  updateNode: Store['updateNode'] = (...a) => this.nodes.updateNode(...a);
  deleteNode: Store['deleteNode'] = (...a) => this.nodes.deleteNode(...a);

  // ---- change-feed consumers (consumers.ts)
  createConsumer: Store['createConsumer'] = (...a) => this.consumers.createConsumer(...a);
  listConsumers: Store['listConsumers'] = () => this.consumers.listConsumers();
  findConsumerByTokenHash: Store['findConsumerByTokenHash'] = (...a) => this.consumers.findConsumerByTokenHash(...a);
  deleteConsumer: Store['deleteConsumer'] = (...a) => this.consumers.deleteConsumer(...a);

  // ---- the change feed (change-feed.ts; commit notifications from the core)
  snapshot: Store['snapshot'] = () => this.feed.snapshot();
  streamSnapshot: Store['streamSnapshot'] = () => this.feed.streamSnapshot();
  currentRevision: Store['currentRevision'] = () => this.feed.currentRevision();
  changesSince: Store['changesSince'] = (...a) => this.feed.changesSince(...a);
  onCommit: Store['onCommit'] = (...a) => this.core.onCommit(...a);
  committedElsewhere: Store['committedElsewhere'] = () => this.core.committedElsewhere();

  // ---- certificates and ACME challenges (certificates.ts)
  putCertificate: Store['putCertificate'] = (...a) => this.certificates.putCertificate(...a);
  getCertificate: Store['getCertificate'] = (...a) => this.certificates.getCertificate(...a);
  deleteCertificate: Store['deleteCertificate'] = (...a) => this.certificates.deleteCertificate(...a);
  listCertificates: Store['listCertificates'] = (...a) => this.certificates.listCertificates(...a);
  putChallenge: Store['putChallenge'] = (...a) => this.certificates.putChallenge(...a);
  getChallenge: Store['getChallenge'] = (...a) => this.certificates.getChallenge(...a);
  deleteChallenge: Store['deleteChallenge'] = (...a) => this.certificates.deleteChallenge(...a);
  listChallenges: Store['listChallenges'] = (...a) => this.certificates.listChallenges(...a);

  // ---- uptime measures (uptime.ts)
  addUptime: Store['addUptime'] = (rows) => this.uptime.add(rows);
  readUptime: Store['readUptime'] = async (...a) => this.uptime.read(...a);
  deleteUptime: Store['deleteUptime'] = (domain) => this.uptime.delete(domain);

  // ---- internal documents and leases (documents.ts)
  getDoc: Store['getDoc'] = (...a) => this.documents.getDoc(...a);
  putDoc: Store['putDoc'] = (...a) => this.documents.putDoc(...a);
  deleteDoc: Store['deleteDoc'] = (...a) => this.documents.deleteDoc(...a);
  listDocs: Store['listDocs'] = (...a) => this.documents.listDocs(...a);
  updateDoc: Store['updateDoc'] = (...a) => this.documents.updateDoc(...a);
  tryLease: Store['tryLease'] = (...a) => this.documents.tryLease(...a);

  async close(): Promise<void> {
    await this.offThread.close();
    return this.core.close();
  }
}
