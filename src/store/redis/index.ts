// The Redis store, for several API processes sharing state. Composed of a core (core.ts: the
// connection, keys, the compare-and-commit script, the overlap check) and one part per resource;
// each method of the Store contract is answered by the part named beside it.
import type { Store } from '../types.ts';
import { RedisCertificates } from './certificates.ts';
import { RedisChangeFeed } from './change-feed.ts';
import { RedisConsumers } from './consumers.ts';
import { RedisCore, type RedisStoreOptions } from './core.ts';
import { RedisDocuments } from './documents.ts';
import { RedisIpLists } from './iplists.ts';
import { RedisNodes } from './nodes.ts';
import { RedisUptime, UPTIME_SCRIPT } from './uptime.ts';
import { RedisUsers } from './users.ts';
import { RedisZones } from './zones.ts';

export type { RedisStoreOptions } from './core.ts';

export class RedisStore implements Store {
  readonly kind = 'redis';
  private readonly core: RedisCore;
  private readonly users: RedisUsers;
  private readonly zones: RedisZones;
  private readonly ipLists: RedisIpLists;
  private readonly nodes: RedisNodes;
  private readonly consumers: RedisConsumers;
  private readonly feed: RedisChangeFeed;
  private readonly certificates: RedisCertificates;
  private readonly uptime: RedisUptime;
  private readonly documents: RedisDocuments;

  constructor(options: RedisStoreOptions) {
    this.core = new RedisCore(options);
    this.users = new RedisUsers(this.core);
    this.zones = new RedisZones(this.core);
    this.ipLists = new RedisIpLists(this.core);
    this.nodes = new RedisNodes(this.core);
    this.consumers = new RedisConsumers(this.core);
    this.feed = new RedisChangeFeed(this.core, this.zones);
    this.certificates = new RedisCertificates(this.core);
    this.core.redis.defineCommand('palisadeUptime', { lua: UPTIME_SCRIPT, numberOfKeys: 0 });
    this.uptime = new RedisUptime(this.core.redis, (domain, resolution, period) => this.core.k('upt', domain, resolution, period));
    this.documents = new RedisDocuments(this.core);
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
  applyRecordChangeSet: Store['applyRecordChangeSet'] = (...a) => this.zones.applyRecordChangeSet(...a);
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
  addUptime: Store['addUptime'] = (rows) => this.core.guard(() => this.uptime.add(rows));
  readUptime: Store['readUptime'] = (...a) => this.core.guard(() => this.uptime.read(...a));
  deleteUptime: Store['deleteUptime'] = (domain) => this.core.guard(() => this.uptime.delete(domain));

  // ---- internal documents and leases (documents.ts)
  getDoc: Store['getDoc'] = (...a) => this.documents.getDoc(...a);
  putDoc: Store['putDoc'] = (...a) => this.documents.putDoc(...a);
  deleteDoc: Store['deleteDoc'] = (...a) => this.documents.deleteDoc(...a);
  listDocs: Store['listDocs'] = (...a) => this.documents.listDocs(...a);
  updateDoc: Store['updateDoc'] = (...a) => this.documents.updateDoc(...a);
  tryLease: Store['tryLease'] = (...a) => this.documents.tryLease(...a);

  close(): Promise<void> {
    return this.core.close();
  }
}
