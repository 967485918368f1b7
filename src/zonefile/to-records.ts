// Zone-file records → the service's records: the types it serves, each value in the form
// the API takes (checked by the same rules as one record sent alone). What the service manages
// itself (the apex SOA and NS set) and types it does not serve are set aside with their line, not
// refused: an exported file holds them, and a file from elsewhere often does too.
import type { FieldError } from '../errors.ts';
import { buildRecord, checkRecordInZone, TTL_MAX, TTL_MIN, type RecordCreate, type RecordState } from '../model/record.ts';
import { RECORD_TYPES, recordTypeNumber, TYPE, type RecordTypeNumber } from '../model/record-types.ts';
import { valueType } from '../model/values/index.ts';
import { parseQuotedTxt, TXT_STRING_MAX } from '../model/txt-strings.ts';
import { Slices } from './slices.ts';
import type { Token } from './tokens.ts';
import type { LineError, ZoneFileRecord } from './parse.ts';

export interface ImportedRecord {
  line: number;
  record: RecordState;
}

export interface ConvertResult {
  records: ImportedRecord[];
  /** Lines not taken (and why), which do not stop the import. */
  skipped: LineError[];
  errors: LineError[];
}

/** The served types by mnemonic (every type the API knows). */
const TYPES = new Map<string, RecordTypeNumber>(Object.values(RECORD_TYPES).map(({ name }) => [name, recordTypeNumber(name)]));
const SERVED = [...TYPES.keys()].filter((t) => t !== 'SOA').join(', ');

/** A name in record data, absolute with its final dot (so the record rules never read it as relative). */
function dataName(token: Token | undefined, zone: string, origin: string): string | undefined {
  if (!token || token.quoted) return undefined;
  if (token.text === '.') return '.';
  if (token.text === '@') return `${origin}.`;
  return token.text.endsWith('.') ? token.text : `${token.text}.${origin}.`;
}

/**
 * The plain-text form of quoted TXT strings when it is served as exactly those strings (255-octet
 * strings but the last, UTF-8 text without control characters): what the API gave back as plain
 * text comes back as plain text, and a round trip changes no value.
 */
function plainTxt(quoted: string): string | undefined {
  const parsed = parseQuotedTxt(quoted);
  if (!parsed.ok) return undefined;
  const { strings } = parsed;
  if (strings.some((s, i) => (i < strings.length - 1 ? s.length !== TXT_STRING_MAX : s.length === 0))) return undefined;
  const bytes = Buffer.concat(strings);
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes) || /[\u0000-\u001f\u007f]/.test(text) || text.trimStart().startsWith('"')) return undefined;
  return text;
}

/**
 * SVCB/HTTPS data as the API takes it: the target made absolute, the params as written. The
 * tokenizer splits `alpn="h2,h3"` at its quote; a quoted token right after `key=` is its value.
 */
function svcbText(d: readonly Token[], zone: string): string | undefined {
  if (d.length < 2 || d[0]!.quoted) return undefined;
  const target = dataName(d[1], zone, zone);
  if (target === undefined) return undefined;
  let text = `${d[0]!.text} ${target}`;
  for (let i = 2; i < d.length; i++) {
    const before = d[i - 1]!;
    const joined = i > 2 && d[i]!.quoted && !before.quoted && before.text.endsWith('=');
    text += joined ? d[i]!.text : ` ${d[i]!.text}`;
  }
  return text;
}

/** The API's `value` (and priority) for one zone-file record's data, or a message. */
function valueOf(r: ZoneFileRecord, type: RecordTypeNumber, zone: string): { value: string; priority?: number } | string {
  const d = r.rdata;
  const count = (n: number) => (d.length === n ? undefined : `${r.type} takes ${n} data field${n > 1 ? 's' : ''}, not ${d.length}`);
  const num = (t: Token | undefined) => (t && !t.quoted && /^\d{1,5}$/.test(t.text) && Number(t.text) <= 65535 ? Number(t.text) : undefined);
  switch (type) {
    case TYPE.SVCB:
    case TYPE.HTTPS: {
      const text = svcbText(d, zone);
      return text === undefined ? `${r.type} takes "SvcPriority TargetName SvcParams…"` : { value: text };
    }
    case TYPE.A:
    case TYPE.AAAA:
      return count(1) ?? (d[0]!.quoted ? 'an address is not quoted' : { value: d[0]!.text });
    case TYPE.CNAME:
    case TYPE.NS:
      return count(1) ?? { value: dataName(d[0], zone, zone) ?? 'a host name' };
    case TYPE.MX: {
      const bad = count(2);
      if (bad) return bad;
      const preference = num(d[0]);
      if (preference === undefined) return 'MX preference must be an integer from 0 to 65535';
      return { value: dataName(d[1], zone, zone) ?? '', priority: preference };
    }
    case TYPE.SRV: {
      const bad = count(4);
      if (bad) return bad;
      const priority = num(d[0]);
      if (priority === undefined) return 'SRV priority must be an integer from 0 to 65535';
      return { value: `${d[1]!.text} ${d[2]!.text} ${dataName(d[3], zone, zone) ?? ''}`, priority };
    }
    case TYPE.TXT: {
      if (d.length === 0) return 'TXT needs at least one string';
      // Each token is one character-string: quoted as written, bare words quoted here.
      const quoted = d.map((t) => (t.quoted ? t.text : `"${t.text.replace(/"/g, '\\"')}"`)).join(' ');
      return { value: plainTxt(quoted) ?? quoted };
    }
    default: {
      // The types in ../model/values: the data as written, names made absolute, checked by the type's rules.
      const kind = valueType(type);
      if (!kind) return 'not taken';
      if (d.length === 0) return `${r.type} needs data`;
      const names = new Set(kind.nameFields);
      return { value: d.map((t, i) => (names.has(i) ? (dataName(t, zone, zone) ?? t.text) : t.text)).join(' ') };
    }
  }
}

/**
 * Converts parsed records. `origin` names are already absolute; the zone is `zone`. Each
 * record passes buildRecord's field checks; the whole set then passes the zone rules
 * (checkRecordInZone) as the zone would hold it. `keep` are the records an import leaves as they
 * are (the service's SOA record, certificate challenges): the rules see them too.
 */
export async function toRecords(parsed: readonly ZoneFileRecord[], zone: string, keep: readonly RecordState[] = []): Promise<ConvertResult> {
  const slices = new Slices();
  const records: ImportedRecord[] = [];
  const skipped: LineError[] = [];
  const errors: LineError[] = [];
  for (const r of parsed) {
    if (slices.due()) await slices.pause();
    const inZone = r.owner === zone || r.owner.endsWith(`.${zone}`);
    if (!inZone) {
      errors.push({ line: r.line, message: `${r.owner || '.'} is outside the zone ${zone}` });
      continue;
    }
    const type = TYPES.get(r.type);
    if (type === undefined) {
      skipped.push({ line: r.line, message: `${r.type} records are not served here (${SERVED} are; SOA and the apex NS set are the service's)` });
      continue;
    }
    if (type === TYPE.SOA) {
      skipped.push({ line: r.line, message: 'the SOA record is the service\'s (its timers are set with the API\'s SOA record)' });
      continue;
    }
    if (type === TYPE.NS && r.owner === zone) {
      skipped.push({ line: r.line, message: 'the apex NS set is the service\'s (its name servers)' });
      continue;
    }
    if (r.ttl < TTL_MIN || r.ttl > TTL_MAX) {
      errors.push({ line: r.line, message: `TTL ${r.ttl} is outside ${TTL_MIN}–${TTL_MAX}` });
      continue;
    }
    const value = valueOf(r, type, zone);
    if (typeof value === 'string') {
      errors.push({ line: r.line, message: value });
      continue;
    }
    const owner = r.owner === zone ? '@' : r.owner.slice(0, -(zone.length + 1));
    const input: RecordCreate = { name: owner, type, value: value.value, ttl: r.ttl, priority: value.priority ?? null, target: r.target ?? [] };
    const fieldErrors: FieldError[] = [];
    const record = buildRecord(input, 0, zone, fieldErrors);
    if (fieldErrors.length > 0) {
      errors.push({ line: r.line, message: fieldErrors.map((e) => `${e.field}: ${e.message}`).join('; ') });
      continue;
    }
    records.push({ line: r.line, record });
  }
  errors.push(...(await zoneRuleErrors(records, keep, slices)));
  return { records, skipped, errors };
}

/** The zone rules over the whole imported set (plus the records kept), name by name. */
async function zoneRuleErrors(records: readonly ImportedRecord[], keep: readonly RecordState[], slices: Slices): Promise<LineError[]> {
  const errors: LineError[] = [];
  const byName = new Map<string, Array<{ line: number; record: RecordState }>>();
  // Distinct ids so the rules can tell records apart (and name them by line).
  const withIds = records.map((r, i) => ({ line: r.line, record: { ...r.record, id: -(i + 1) } }));
  for (const r of [...withIds, ...keep.map((k) => ({ line: 0, record: k }))]) {
    const list = byName.get(r.record.name) ?? [];
    list.push(r);
    byName.set(r.record.name, list);
  }
  const lineOf = new Map(withIds.map((r) => [r.record.id, r.line]));
  for (const r of withIds) {
    if (slices.due()) await slices.pause();
    const others = byName.get(r.record.name)!.filter((o) => o !== r).map((o) => o.record);
    // Of the same type only earlier lines (larger ids here) and kept records count, so a
    // duplicate is named once, at its second line.
    const problems = checkRecordInZone(r.record, others.filter((o) => o.type !== r.record.type || o.id > r.record.id));
    for (const p of problems) {
      const message = p.message.replace(/record (-\d+)/g, (_, id: string) => (lineOf.has(Number(id)) ? `line ${lineOf.get(Number(id))}` : `record ${id}`));
      errors.push({ line: r.line, message: `${p.field}: ${message}` });
    }
  }
  return errors;
}
