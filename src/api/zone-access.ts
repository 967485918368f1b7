// Finding the caller's own zone from a path parameter. Another tenant's zone answers exactly
// like a missing one.
import type { FastifyInstance } from 'fastify';
import { notFound, unprocessable } from '../errors.ts';
import { normaliseDomainName } from '../model/names.ts';
import type { Zone, ZoneHead } from '../store/types.ts';

/** The canonical zone name of a path parameter (IDN → punycode, lower case); 404 when it cannot be one. */
export function zoneName(param: string): string {
  const name = normaliseDomainName(param);
  if (!name.ok) throw notFound(`domain ${param}`);
  return name.value;
}

export async function ownZone(app: FastifyInstance, param: string, ownerId: number): Promise<Zone> {
  const name = zoneName(param);
  // The owner's claim, whether it holds the name or sits beside another account's (issue 26).
  const zone = await app.store.getZone(name, ownerId);
  if (!zone) throw notFound(`domain ${name}`);
  return zone;
}

/** The caller's zone without its records (settings and count: constant cost whatever its size). */
export async function ownZoneHead(app: FastifyInstance, param: string, ownerId: number): Promise<ZoneHead> {
  const name = zoneName(param);
  const zone = await app.store.getZoneHead(name, ownerId);
  if (!zone) throw notFound(`domain ${name}`);
  return zone;
}

/**
 * Whether the caller's claim holds its name. What is kept by name alone (the certificate and its
 * key, the edges' measures) is the holder's: another account's pending claim beside it sees none.
 */
export async function holdsName(app: FastifyInstance, head: ZoneHead): Promise<boolean> {
  return (await app.store.getZoneHead(head.domain.domain))?.domain.ownerId === head.domain.ownerId;
}

/** 422 naming each node id that is not registered (checked inside the store's atomic step). */
export function checkNodesExist(ids: readonly number[] | undefined, nodeExists: (id: number) => boolean, field: string): void {
  const missing = (ids ?? []).filter((id) => !nodeExists(id));
  if (missing.length > 0) throw unprocessable(missing.map((id) => ({ field, message: `node ${id} does not exist (see GET /nodes/)` })));
}
