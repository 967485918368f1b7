// The DNS record resource: schemas, per-field checks, and the zone-level rules a record must
// pass against the records already in its zone (CNAME exclusivity, duplicates, apex rules).
import { Type, type Static } from 'typebox';
import type { FieldError } from '../errors.ts';
import { geoTargetById } from './geo-targets.ts';
import { EXPECTED, Nullable, sortedUnique } from './common.ts';
import { normaliseOwnerName } from './names.ts';
import { canonicalRecordValue, valueHelp } from './record-values.ts';
import { hasPriority, isRecordTypeNumber, RECORD_TYPES, recordTypeNumber, TYPE, TYPE_MNEMONIC_PATTERN, TYPE_NUMBERS, typeName, type RecordTypeNumber } from './record-types.ts';

export const TTL_MIN = 30;
export const TTL_MAX = 604_800;
export const TTL_DEFAULT = 300;

/** What a record's `type` accepts, in words, for the error a wrong one gets. */
export const TYPE_EXPECTED = `a record type, by name or number: ${Object.entries(RECORD_TYPES)
  .map(([number, { name }]) => `${name} (${number})`)
  .join(', ')}`;

const fields = {
  name: Type.String({
    minLength: 1,
    maxLength: 253,
    description: '"@" for the apex, a name relative to the domain ("www", "_sip._tcp", "*.dev"), or a full name inside the domain',
  }),
  type: Type.Union([Type.Integer({ enum: [...TYPE_NUMBERS] }), Type.String({ pattern: TYPE_MNEMONIC_PATTERN })], {
    [EXPECTED]: TYPE_EXPECTED,
    description: `${TYPE_EXPECTED.replace(/^a record type, by name or number: /, '')}. 1–8 are the service's own numbers; the types added since go by their IANA TYPE code. The mnemonic ("MX") is accepted too. Responses give the number and \`type_name\`.`,
  }),
  value: Type.String({
    maxLength: 4096,
    description:
      'Record data, by type. A: an IPv4 address. AAAA: an IPv6 address. CNAME, NS: a host name. MX: the exchange host name, or "." for a null MX (RFC 7505); the preference goes in `priority`. ' +
      'TXT: plain text (sent in 255-octet strings), or zone-file form, quoted strings sent as they are ("v=spf1 …" "include:…"; inside quotes \\" \\\\ \\DDD); at most 4,000 octets. ' +
      'SOA: "rname refresh retry expire minimum" (mname and serial are the service\'s). SRV: "weight port target" ("." as target: no service); the priority goes in `priority`. ' +
      valueHelp() +
      ' SVCB, HTTPS (RFC 9460): "SvcPriority TargetName SvcParams", all in `value` ("1 . alpn=h2,h3 ipv4hint=192.0.2.1"; "0 cdn.example.net." for AliasMode); keys mandatory, alpn, no-default-alpn, port, ipv4hint, ech (base64), ipv6hint, dohpath, keyNNNNN; stored as NSD and BIND print it (`1 . alpn="h2,h3" ipv4hint=192.0.2.1`).',
  }),
  ttl: Type.Integer({ minimum: TTL_MIN, maximum: TTL_MAX, description: `Seconds, ${TTL_MIN}–${TTL_MAX}; default ${TTL_DEFAULT}` }),
  priority: Nullable(Type.Integer({ minimum: 0, maximum: 65535 }), {
    description: 'MX preference / SRV priority; required for MX and SRV, null or absent otherwise',
  }),
  target: Type.Array(Type.Integer({ minimum: 1 }), {
    maxItems: 300,
    description: 'GeoNames IDs of countries or continents this variant is for; empty = general (see GET /geo/targets)',
  }),
};

export const RecordCreate = Type.Object(
  {
    name: fields.name,
    type: fields.type,
    value: fields.value,
    ttl: Type.Optional(fields.ttl),
    priority: Type.Optional(fields.priority),
    target: Type.Optional(fields.target),
  },
  { additionalProperties: false },
);
export type RecordCreate = Static<typeof RecordCreate>;

export const RecordPatch = Type.Object(
  {
    name: Type.Optional(fields.name),
    type: Type.Optional(fields.type),
    value: Type.Optional(fields.value),
    ttl: Type.Optional(fields.ttl),
    priority: Type.Optional(fields.priority),
    target: Type.Optional(fields.target),
  },
  { additionalProperties: false },
);
export type RecordPatch = Static<typeof RecordPatch>;

export const DnsRecord = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  type: fields.type,
  type_name: Type.String({ description: 'The type as its DNS mnemonic (read-only)' }),
  value: Type.String(),
  ttl: Type.Integer(),
  priority: Nullable(Type.Integer()),
  target: Type.Array(Type.Integer()),
}, { examples: [{ id: 7, name: 'www', type: 1, type_name: 'A', value: '192.0.2.1', ttl: 300, priority: null, target: [] }] });

export interface RecordState {
  id: number;
  name: string;
  type: RecordTypeNumber;
  value: string;
  ttl: number;
  priority: number | null;
  target: number[];
  /**
   * The service's own DNS-01 TXT, there while a certificate order waits: served like any record,
   * but never listed to, changed or removed by the customer.
   */
  acme?: true;
}

/** The API form, fields in schema order (record lists are serialised without the schema). */
export function renderRecord(r: RecordState): Static<typeof DnsRecord> {
  return { id: r.id, name: r.name, type: r.type, type_name: typeName(r.type), value: r.value, ttl: r.ttl, priority: r.priority, target: r.target };
}

/**
 * Builds the record a create (or a patch merged over an existing record) describes, with every
 * field canonical. Field errors go to `errors`; the result is meaningful only when none were added.
 */
export function buildRecord(input: RecordCreate, id: number, zone: string, errors: FieldError[]): RecordState {
  const type = recordTypeNumber(input.type);
  const name = normaliseOwnerName(input.name, zone);
  if (!name.ok) errors.push({ field: 'name', message: `"${input.name}" ${name.message}` });
  const value = isRecordTypeNumber(type) ? canonicalRecordValue(type, input.value, zone) : undefined;
  if (value && !value.ok) errors.push({ field: 'value', message: `${typeName(type)} value ${value.message}` });
  const priority = input.priority ?? null;
  if (hasPriority(type) && priority === null) errors.push({ field: 'priority', message: `${typeName(type)} records need a priority (0–65535)` });
  if (!hasPriority(type) && priority !== null) errors.push({ field: 'priority', message: `${typeName(type)} records have no priority` });
  const target = sortedUnique(input.target ?? []);
  target.forEach((t) => {
    if (!geoTargetById(t)) errors.push({ field: 'target', message: `${t} is not the GeoNames ID of a country or continent` });
  });
  return {
    id,
    name: name.ok ? name.value : input.name,
    type,
    value: value?.ok ? value.value : input.value,
    ttl: input.ttl ?? TTL_DEFAULT,
    priority,
    target,
  };
}

/**
 * When the records left at a name would hold a DS but no NS (the delegation removed from under
 * it), the error that refuses the change; `field` names what caused it.
 */
export function orphanedDs(left: readonly RecordState[], field: string): FieldError | undefined {
  const ds = left.find((r) => r.type === TYPE.DS);
  if (!ds || left.some((r) => r.type === TYPE.NS)) return undefined;
  return { field, message: `"${ds.name}" would keep DS record ${ds.id} without NS records; a DS belongs at a delegation (remove the DS first)` };
}

const sameTargets = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => x === b[i]);
const overlaps = (a: number[], b: number[]) => (a.length === 0 && b.length === 0) || a.some((x) => b.includes(x));

/**
 * The rules a record must pass beside the other records of its zone (`others` excludes the
 * record itself when it is being updated). Returns 422-style field errors.
 */
export function checkRecordInZone(record: RecordState, others: readonly RecordState[]): FieldError[] {
  const errors: FieldError[] = [];
  const atName = others.filter((r) => r.name === record.name);
  const t = typeName(record.type);
  if (record.name === '@' && record.type === TYPE.CNAME) errors.push({ field: 'type', message: 'a CNAME cannot be at the apex (RFC 1034 §3.6.2)' });
  if (record.name === '@' && record.type === TYPE.NS) errors.push({ field: 'type', message: 'the apex NS set is managed by the service; NS records delegate names below the apex' });
  if (record.type === TYPE.SOA) {
    if (record.name !== '@') errors.push({ field: 'name', message: 'an SOA record can only be at the apex ("@")' });
    if (others.some((r) => r.type === TYPE.SOA)) errors.push({ field: 'type', message: 'the zone already has an SOA record; update that one' });
  }
  // DS travels with its delegation, which is the same everywhere.
  if ((record.type === TYPE.SOA || record.type === TYPE.NS || record.type === TYPE.DS) && record.target.length > 0) {
    errors.push({ field: 'target', message: `${t} records cannot be geo-targeted` });
  }
  if (record.type === TYPE.CNAME) {
    const other = atName.find((r) => r.type !== TYPE.CNAME);
    if (other) errors.push({ field: 'type', message: `a CNAME cannot share a name with other data (record ${other.id} is ${typeName(other.type)}); RFC 2181 §10.1` });
    const clash = atName.find((r) => r.type === TYPE.CNAME && overlaps(r.target, record.target));
    if (clash) errors.push({ field: 'target', message: `record ${clash.id} is already the CNAME at this name for an overlapping target set` });
  } else {
    const cname = atName.find((r) => r.type === TYPE.CNAME);
    if (cname) errors.push({ field: 'name', message: `"${record.name}" is a CNAME (record ${cname.id}); a CNAME cannot share a name with other data` });
  }
  if (record.type === TYPE.DS) {
    // RFC 4034 §5: a DS is the parent's record of a delegated child, served from the parent side of the cut.
    if (record.name === '@') errors.push({ field: 'name', message: 'a DS record cannot be at the apex: the apex DS belongs in the parent zone (give it to your registrar)' });
    else if (!atName.some((r) => r.type === TYPE.NS)) errors.push({ field: 'name', message: `a DS record belongs at a delegation: "${record.name}" has no NS records (add the NS set first)` });
  }
  if (record.type === TYPE.MX) {
    // RFC 7505 §3: a null MX is the only MX at its name.
    const other = atName.find((r) => r.type === TYPE.MX && (r.value === '.') !== (record.value === '.'));
    if (other) errors.push({ field: 'value', message: `a null MX (".") must be the only MX at its name (record ${other.id} is an MX); RFC 7505` });
  }
  const duplicate = atName.find(
    (r) => r.type === record.type && r.value === record.value && r.priority === record.priority && sameTargets(r.target, record.target),
  );
  if (duplicate) errors.push({ field: 'value', message: `duplicates record ${duplicate.id}` });
  return errors;
}
