// Before ordering: do the domain's CAA records (RFC 8659) let our CA issue for each name? The CA
// checks them too and refuses, and a refused order still counts against the CA's limits; so an
// order CAA forbids is never placed, and the task says which record stands in the way.
//
// We are the domain's name servers when this runs (DNS-01), so the records are read from our own
// store: for each name, the relevant CAA set is the first non-empty one climbing from the name
// towards the apex (§3), following CNAMEs inside the zone. Above the apex the parent zones are
// not ours: no set found within the zone means no CAA restriction. Geo-targeted variants: the
// general set is what the check reads when there is one, else every variant together.
import { caaFields, caaIssuer, type CaaFields } from '../model/values/caa.ts';
import type { RecordState } from '../model/record.ts';
import { TYPE } from '../model/record-types.ts';
import type { NameProblem } from '../model/task.ts';

/** The records at an owner name, relative to the zone ("@", "www"). */
export type RecordsAt = (owner: string) => Promise<readonly RecordState[]>;

/** Tags this check understands; a critical property with any other tag forbids issuance (§4.1). */
const KNOWN_TAGS = new Set(['issue', 'issuewild', 'iodef', 'contactemail', 'contactphone', 'issuemail', 'issuevmc']);
const MAX_ALIASES = 8;

const relative = (name: string, zone: string) => (name === zone ? '@' : name.slice(0, -(zone.length + 1)));
const inZone = (name: string, zone: string) => name === zone || name.endsWith(`.${zone}`);

/** The CAA set a CA would find for `name` (no "*." prefix), and where it was found; undefined when none in the zone. */
export async function relevantCaaSet(zone: string, name: string, recordsAt: RecordsAt): Promise<{ owner: string; set: CaaFields[] } | undefined> {
  for (let candidate = name; inZone(candidate, zone); candidate = candidate.slice(candidate.indexOf('.') + 1)) {
    let at = candidate;
    for (let hops = 0; hops <= MAX_ALIASES && inZone(at, zone); hops++) {
      const records = await recordsAt(relative(at, zone));
      const caa = records.filter((r) => r.type === TYPE.CAA);
      const general = caa.filter((r) => r.target.length === 0);
      const chosen = general.length > 0 ? general : caa;
      if (chosen.length > 0) return { owner: at, set: chosen.map((r) => caaFields(r.value)) };
      const cname = records.find((r) => r.type === TYPE.CNAME);
      if (!cname) break;
      at = cname.value;
    }
    if (candidate === zone) break;
  }
  return undefined;
}

/** Why `set` forbids `identity` to issue for `name` (a wildcard when it starts "*."), or undefined when it allows it. */
export function caaRefusal(name: string, set: readonly CaaFields[], identity: string): string | undefined {
  const critical = set.find((p) => (p.flags & 128) !== 0 && !KNOWN_TAGS.has(p.tag));
  if (critical) return `a critical CAA property "${critical.tag}" is not understood, so no CA may issue (RFC 8659 §4.1)`;
  const wildcard = name.startsWith('*.');
  const wild = set.filter((p) => p.tag === 'issuewild');
  const relevant = wildcard && wild.length > 0 ? wild : set.filter((p) => p.tag === 'issue');
  if (relevant.length === 0) return undefined;
  const issuers = relevant.map((p) => caaIssuer(p.value)).map((i) => (i.ok ? i.value : ''));
  if (issuers.includes(identity.toLowerCase())) return undefined;
  const named = [...new Set(issuers.filter(Boolean))];
  const tag = relevant[0]!.tag;
  return named.length === 0
    ? `its CAA ${tag} records allow no CA at all; add 0 ${tag} "${identity}"`
    : `its CAA ${tag} records allow only ${named.join(', ')}, not our CA (${identity}); add 0 ${tag} "${identity}"`;
}

/** The names CAA forbids our CA (`identity`) to issue for, as task problems. */
export async function caaProblems(zone: string, names: readonly string[], identity: string, recordsAt: RecordsAt): Promise<NameProblem[]> {
  const problems: NameProblem[] = [];
  for (const name of names) {
    const found = await relevantCaaSet(zone, name.startsWith('*.') ? name.slice(2) : name, recordsAt);
    if (!found) continue;
    const refusal = caaRefusal(name, found.set, identity);
    if (refusal) problems.push({ name, type: 'palisade:caa', detail: `${name}: ${refusal} (CAA at ${found.owner})` });
  }
  return problems;
}
