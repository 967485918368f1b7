// A domain as name servers receive it: its DNSSEC signing keys opened (the store keeps each
// private key sealed with the operator key) while `dnssec` is on or the domain is still turning
// it off (`signing.unsigning`: the parent may hold a DS, so answers stay signed), and left out
// once off (keys are kept for a later turning on; a name server signs whenever `signing` has an
// active key). Every way a domain reaches a name server passes here: the snapshot, the change pages,
// one zone whole, and the serve role's in-process feed. Edges get `edgeDomain` (edge-feed-format.ts).
import type { DomainState } from '../model/domain.ts';
import type { Zone } from '../store/types.ts';

/** Opens a sealed private key; throws when it cannot (no operator key, or another one). */
export type OpenSealed = (sealed: string) => string;

/** Told of a domain whose keys could not be opened: its name servers get it without keys (they answer SERVFAIL for it rather than unsigned). */
export type KeyTrouble = (domain: string, message: string) => void;

export function nameServerDomain(domain: DomainState, open: OpenSealed | undefined, trouble?: KeyTrouble): DomainState {
  if (domain.signing === undefined) return domain;
  const { signing, ...rest } = domain;
  if (domain.dnssec !== true && signing.unsigning !== true) return rest;
  try {
    if (!open) throw new Error('no operator key (PALISADE_SECRET_KEY) to open the DNSSEC keys with');
    return { ...rest, signing: { ...signing, keys: signing.keys.map((k) => ({ ...k, private_key: open(k.private_key) })) } };
  } catch (error) {
    trouble?.(domain.domain, (error as Error).message);
    return rest;
  }
}

export const nameServerZone = (zone: Zone, open: OpenSealed | undefined, trouble?: KeyTrouble): Zone =>
  zone.domain.signing === undefined ? zone : { ...zone, domain: nameServerDomain(zone.domain, open, trouble) };

/**
 * A zone's JSON text as the snapshot streams it: passed on unparsed unless its domain has
 * signing keys. (Record values are JSON strings, whose quotes are escaped: the unescaped key
 * `"signing":` only occurs as the domain's field.)
 */
export function nameServerZoneJson(json: string, open: OpenSealed | undefined, trouble?: KeyTrouble): string {
  if (!json.includes('"signing":')) return json;
  return JSON.stringify(nameServerZone(JSON.parse(json) as Zone, open, trouble));
}
