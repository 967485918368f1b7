// The writes that make up a zone in Redis (see zones.ts for the layout): a record's hash field and
// owner index, a claim's head and the indexes that name it, and their removal. Pure: a list of
// operations for plan.ts to run in one transaction.
import { isProven } from '../../model/domain.ts';
import type { RecordState } from '../../model/record.ts';
import { claimKey, reversedName } from '../name-tree.ts';
import type { ZoneHead } from '../types.ts';
import type { RedisCore } from './core.ts';
import { withRevision, type Op } from './plan.ts';

export function recordOps(core: RedisCore, zone: string, record: RecordState): Op[] {
  return [
    { op: 'hsetv', key: core.k('zrec', zone), f: String(record.id), v: JSON.stringify(record) },
    { op: 'zaddv', key: core.k('zat', zone), v: `${record.name}|${record.id}` },
  ];
}

/**
 * Writes a claim's head and indexes. The account holding the name (`primary`) keeps it at
 * zone:NAME (what name servers, edges and certificates read); another account's pending claim
 * of the name at zone:NAME#OWNER (claimKey), listed in zclaims:NAME. zoneowners/zonetree index
 * proven holders (the overlap rule), `pending` every pending claim ("reversed.name.|owner").
 */
export function zoneOps(core: RedisCore, head: ZoneHead, isNew: boolean, records: readonly RecordState[] = [], primary = true): Op[] {
  const name = head.domain.domain;
  const owner = head.domain.ownerId;
  const key = primary ? name : claimKey(name, owner);
  const proven = isProven(head.domain);
  const ops: Op[] = [withRevision(core.k('zone', key), head, (z) => z.domain)];
  if (isNew) {
    ops.push({ op: 'zadd', key: core.k('udom', owner), s: 0, v: name });
    ops.push(primary ? { op: 'zadd', key: core.k('zones'), s: 0, v: name } : { op: 'hset', key: core.k('zclaims', name), f: String(owner), v: '1' });
  }
  if (primary && proven) ops.push({ op: 'hset', key: core.k('zoneowners'), f: name, v: String(owner) }, { op: 'zadd', key: core.k('zonetree'), s: 0, v: `${reversedName(name)}|${name}` });
  else if (primary) ops.push({ op: 'hdel', key: core.k('zoneowners'), f: name }, { op: 'zrem', key: core.k('zonetree'), v: `${reversedName(name)}|${name}` });
  ops.push({ op: proven ? 'zrem' : 'zadd', key: core.k('pending'), s: 0, v: `${reversedName(name)}|${owner}` });
  for (const record of records) ops.push(...recordOps(core, key, record));
  return ops;
}

/** Removes a claim, its records and indexes (and the holder's certificate and challenge). */
export function dropClaimOps(core: RedisCore, name: string, owner: number, primary: boolean): Op[] {
  const key = primary ? name : claimKey(name, owner);
  const ops: Op[] = [
    { op: 'del', key: core.k('zone', key) },
    { op: 'del', key: core.k('zrec', key) },
    { op: 'del', key: core.k('zat', key) },
    { op: 'zrem', key: core.k('udom', owner), v: name },
    { op: 'zrem', key: core.k('pending'), v: `${reversedName(name)}|${owner}` },
  ];
  if (primary) {
    ops.push(
      { op: 'zrem', key: core.k('zones'), v: name },
      { op: 'hdel', key: core.k('zoneowners'), f: name },
      { op: 'zrem', key: core.k('zonetree'), v: `${reversedName(name)}|${name}` },
      { op: 'del', key: core.k('cert', name) },
      { op: 'zrem', key: core.k('certs'), v: name },
      { op: 'del', key: core.k('acmech', name) },
      { op: 'zrem', key: core.k('acmechs'), v: name },
    );
  } else ops.push({ op: 'hdel', key: core.k('zclaims', name), f: String(owner) });
  return ops;
}
