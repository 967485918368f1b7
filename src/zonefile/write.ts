// A zone's records as a BIND-format zone file: $ORIGIN, $TTL, the service's SOA and apex NS set,
// then every record, owners relative to the origin. Geo-targeted variants have no zone-file form;
// each is written as a comment `;palisade-geo ID[,ID…] OWNER TTL IN TYPE DATA`, which other
// servers ignore and this service's import reads back as that variant. Pure: no I/O.
import type { RecordState } from '../model/record.ts';
import { TYPE, typeName } from '../model/record-types.ts';
import { isQuotedTxt, quoteTxtString, txtStrings } from '../model/txt-strings.ts';
import { valueType } from '../model/values/index.ts';
import { GEO_COMMENT } from './tokens.ts';

export interface ZoneFileHead {
  /** The apex, no final dot. */
  apex: string;
  soa: { ttl: number; mname: string; rname: string; serial: number; refresh: number; retry: number; expire: number; minimum: number };
  ns: { ttl: number; names: readonly string[] };
}

const fqdn = (name: string) => (name === '.' || name.endsWith('.') ? name : `${name}.`);

/** A record's type and data in zone-file form ("MX 10 mail.example.org."). */
export function recordData(r: RecordState): string {
  switch (r.type) {
    case TYPE.CNAME:
    case TYPE.NS:
      return `${typeName(r.type)} ${fqdn(r.value)}`;
    case TYPE.MX:
      return `MX ${r.priority} ${fqdn(r.value)}`;
    case TYPE.SRV: {
      const [weight, port, target] = r.value.split(' ');
      return `SRV ${r.priority} ${weight} ${port} ${fqdn(target!)}`;
    }
    case TYPE.TXT:
      // Quoted strings are kept as the customer split them; plain text as the strings it is served as.
      return `TXT ${isQuotedTxt(r.value) ? r.value : txtStrings(r.value).map(quoteTxtString).join(' ')}`;
    default: {
      const kind = valueType(r.type);
      return `${typeName(r.type)} ${kind ? kind.zoneData(r.value) : r.value}`;
    }
  }
}

/**
 * A line in ASCII: every other character as its UTF-8 bytes in \DDD escapes (RFC 1035 §5.1), the
 * form every server's zone-file reader takes (Knot's zone-check refuses raw UTF-8 in TXT data).
 */
export function asciiOnly(line: string): string {
  if (/^[\x00-\x7f]*$/.test(line)) return line;
  return line.replace(/[^\x00-\x7f]/gu, (c) => [...Buffer.from(c, 'utf8')].map((b) => `\\${String(b).padStart(3, '0')}`).join(''));
}

/** The zone file; records in the order given (callers sort). SOA records among them are left out (the head has it). */
export function writeZoneFile(head: ZoneFileHead, records: readonly RecordState[]): string {
  const { soa, ns } = head;
  const lines = [
    `; ${head.apex}: exported by Palisade. Geo-targeted variants are the "${GEO_COMMENT.trim()}" comments.`,
    `$ORIGIN ${fqdn(head.apex)}`,
    `$TTL ${soa.minimum}`,
    `@ ${soa.ttl} IN SOA ${fqdn(soa.mname)} ${fqdn(soa.rname)} ${soa.serial} ${soa.refresh} ${soa.retry} ${soa.expire} ${soa.minimum}`,
    ...ns.names.map((name) => `@ ${ns.ttl} IN NS ${fqdn(name)}`),
  ];
  for (const r of records) {
    if (r.type === TYPE.SOA) continue;
    const line = asciiOnly(`${r.name} ${r.ttl} IN ${recordData(r)}`);
    lines.push(r.target.length > 0 ? `${GEO_COMMENT}${r.target.join(',')} ${line}` : line);
  }
  return `${lines.join('\n')}\n`;
}
