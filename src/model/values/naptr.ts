// NAPTR (RFC 3403 §4.1): "order preference flags service regexp replacement", the three strings
// written quoted, the replacement an absolute name ("." for none). A rule rewrites either by its
// regexp or by its replacement, never both (§4.1: the replacement is "." when a regexp is used).
// Its answers carry no additional records: NSD adds none for NAPTR, and neither do we.
import { normaliseTargetName } from '../names.ts';
import { quoteTxtString } from '../txt-strings.ts';
import { characterString, fail, fqdn, nameWire, ok, splitFields, u16, uint, wireString } from './fields.ts';
import type { ValueType } from './value-type.ts';

interface NaptrFields {
  order: number;
  preference: number;
  flags: Buffer;
  service: Buffer;
  regexp: Buffer;
  replacement: string;
}

function parse(value: string, zone: string): { ok: true; value: NaptrFields } | { ok: false; message: string } {
  const fields = splitFields(value);
  if (!fields.ok) return fields;
  const f = fields.value;
  if (f.length !== 6) return fail('must be "order preference flags service regexp replacement", e.g. 100 10 "S" "SIP+D2U" "" _sip._udp.example.org');
  const order = uint(f[0], 65535);
  if (order === undefined) return fail('order must be an integer from 0 to 65535');
  const preference = uint(f[1], 65535);
  if (preference === undefined) return fail('preference must be an integer from 0 to 65535');
  const strings: Buffer[] = [];
  for (const [i, what] of [[2, 'flags'], [3, 'service'], [4, 'regexp']] as const) {
    const s = characterString(f[i]!);
    if (!s.ok) return fail(`${what} ${s.message}`);
    strings.push(s.value);
  }
  const [flags, service, regexp] = strings as [Buffer, Buffer, Buffer];
  if (!/^[A-Za-z0-9]*$/.test(flags.toString('latin1'))) return fail('flags must be letters or digits ("S", "A", "U", "P" or "")');
  if (f[5]!.quoted) return fail('replacement must be a domain name or "." (not quoted)');
  let replacement = '.';
  if (f[5]!.text !== '.') {
    const name = normaliseTargetName(f[5]!.text, zone);
    if (!name.ok) return fail(`replacement must be a domain name or ".": ${name.message}`);
    replacement = name.value;
  }
  if (regexp.length > 0 && replacement !== '.') return fail('has both a regexp and a replacement; the replacement must be "." when a regexp is used (RFC 3403 §4.1)');
  if (regexp.length === 0 && replacement === '.') return fail('needs a regexp or a replacement (both are empty)');
  return ok({ order, preference, flags, service, regexp, replacement });
}

function must(value: string): NaptrFields {
  const parsed = parse(value, '.');
  if (!parsed.ok) throw new Error(`not a canonical NAPTR value: ${value}`);
  return parsed.value;
}

export const NAPTR: ValueType = {
  name: 'NAPTR',
  code: 35,
  help: 'NAPTR: "order preference flags service regexp replacement" (RFC 3403), e.g. `100 10 "S" "SIP+D2U" "" _sip._udp.example.org`; a regexp or a replacement, not both ("." when none).',
  nameFields: [5],
  canonical(value, zone) {
    const parsed = parse(value, zone);
    if (!parsed.ok) return parsed;
    const n = parsed.value;
    return ok([n.order, n.preference, quoteTxtString(n.flags), quoteTxtString(n.service), quoteTxtString(n.regexp), n.replacement].join(' '));
  },
  zoneData(value) {
    const cut = value.lastIndexOf(' ');
    return `${value.slice(0, cut)} ${fqdn(value.slice(cut + 1))}`;
  },
  rdata(value) {
    const n = must(value);
    return Buffer.concat([u16(n.order), u16(n.preference), wireString(n.flags), wireString(n.service), wireString(n.regexp), nameWire(n.replacement)]);
  },
};
