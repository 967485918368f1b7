// Reverse zones (RFC 1035 §3.5, RFC 3596 §2.5) as domains a customer may register: a network's
// zone under in-addr.arpa by whole octets (1–3: a /8, /16 or /24), or under ip6.arpa by nibbles
// (1–31). Networks that are never delegated on the public Internet are refused: private, loopback,
// link-local, "this network" and unique-local addresses (RFC 6303's locally served zones, less the
// documentation ranges, kept for tests and examples as .test and .example are). RFC 2317
// classless names ("0/25.2.0.192.in-addr.arpa") are not domain names here.

const OCTET = /^(?:0|[1-9]\d{0,2})$/;
const NIBBLE = /^[0-9a-f]$/;

/** Networks never publicly delegated, as leading octets (IPv4) or nibbles (IPv6), most significant first. */
const PRIVATE_V4 = [['10'], ['127'], ['0'], ['169', '254'], ['192', '168'], ...Array.from({ length: 16 }, (_, i) => ['172', String(16 + i)])];
const PRIVATE_V6 = [['f', 'c'], ['f', 'd'], ['f', 'e', '8'], ['f', 'e', '9'], ['f', 'e', 'a'], ['f', 'e', 'b']];

/** Whether the zone's leading labels (most significant first) lie inside one of `networks`. */
const inside = (labels: readonly string[], networks: ReadonlyArray<readonly string[]>) => networks.some((net) => labels.length >= net.length && net.every((l, i) => labels[i] === l));

/** Whether `name` is under in-addr.arpa or ip6.arpa (then `reverseZoneProblem` decides). */
export const isReverseZone = (name: string): boolean => name.endsWith('.in-addr.arpa') || name.endsWith('.ip6.arpa') || name === 'in-addr.arpa' || name === 'ip6.arpa';

/** Why a reverse zone name cannot be registered, or undefined when it can. */
export function reverseZoneProblem(name: string): string | undefined {
  const v4 = name === 'in-addr.arpa' || name.endsWith('.in-addr.arpa');
  const labels = name.split('.').slice(0, -2).reverse();
  if (v4) {
    if (labels.length < 1 || labels.length > 3) return `${name}: a reverse zone under in-addr.arpa names 1 to 3 octets (a /8, /16 or /24 network)`;
    const bad = labels.find((l) => !OCTET.test(l) || Number(l) > 255);
    if (bad !== undefined) return `${name}: "${bad}" is not an octet (0–255, no leading zeros)`;
    if (inside(labels, PRIVATE_V4)) {
      return `${name} is a private, loopback or link-local network, never delegated on the public Internet (RFC 6303)`;
    }
    return undefined;
  }
  if (labels.length < 1 || labels.length > 31) return `${name}: a reverse zone under ip6.arpa names 1 to 31 nibbles`;
  const bad = labels.find((l) => !NIBBLE.test(l));
  if (bad !== undefined) return `${name}: "${bad}" is not one hex nibble (0–9, a–f)`;
  if (inside(labels, PRIVATE_V6)) {
    return `${name} is a unique-local or link-local network, never delegated on the public Internet (RFC 6303)`;
  }
  return undefined;
}
