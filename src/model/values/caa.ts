// CAA (RFC 8659): "flags tag value", e.g. `0 issue "letsencrypt.org"`. The tag is lower-cased
// (tags match without regard to case, §4.1, and NSD refuses upper-case ones); the value is always
// written quoted. issue / issuewild values must have the §4.2 syntax, iodef a mailto: or http(s): URL.
import type { Checked } from '../names.ts';
import { quoteTxtString } from '../txt-strings.ts';
import { characterString, fail, ok, splitFields, u8, uint, type Field } from './fields.ts';
import type { ValueType } from './value-type.ts';

export interface CaaFields {
  flags: number;
  tag: string;
  value: string;
}

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const ISSUER = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);
const PARAMETER = /^[A-Za-z0-9]+\s*=\s*[\x21-\x3a\x3c-\x7e]*$/;

/** The issuer domain an issue / issuewild value names ("" for none: ";" forbids issuance), or why it is malformed. */
export function caaIssuer(value: string): Checked<string> {
  const [domain = '', ...parameters] = value.split(';');
  const issuer = domain.trim();
  if (issuer !== '' && !ISSUER.test(issuer)) return fail(`"${issuer}" is not an issuer domain name`);
  for (const p of parameters.map((x) => x.trim())) {
    if (p !== '' && !PARAMETER.test(p)) return fail(`parameter "${p}" is not tag=value`);
  }
  return ok(issuer.toLowerCase());
}

function parse(fields: readonly Field[]): Checked<CaaFields> {
  if (fields.length !== 3) return fail('must be "flags tag value", e.g. 0 issue "letsencrypt.org"');
  const flags = uint(fields[0], 255);
  if (flags === undefined) return fail('flags must be an integer from 0 to 255 (128: critical)');
  const tag = fields[1]!.text.toLowerCase();
  if (fields[1]!.quoted || !/^[a-z0-9]{1,15}$/.test(tag)) return fail(`tag must be 1–15 letters or digits (issue, issuewild, iodef…), not "${fields[1]!.text}"`);
  const bytes = characterString(fields[2]!);
  if (!bytes.ok) return fail(`value ${bytes.message}`);
  return ok({ flags, tag, value: bytes.value.toString('latin1') });
}

/** A canonical CAA value's fields. */
export function caaFields(value: string): CaaFields {
  const fields = splitFields(value);
  const parsed = fields.ok ? parse(fields.value) : undefined;
  if (!parsed?.ok) throw new Error(`not a canonical CAA value: ${value}`);
  return parsed.value;
}

export const CAA: ValueType = {
  name: 'CAA',
  code: 257,
  help: 'CAA: "flags tag value" (RFC 8659), e.g. `0 issue "letsencrypt.org"`, `0 issuewild ";"`, `0 iodef "mailto:security@example.org"`; the tag is lower-cased.',
  nameFields: [],
  canonical(value) {
    const fields = splitFields(value);
    if (!fields.ok) return fields;
    const parsed = parse(fields.value);
    if (!parsed.ok) return parsed;
    const { flags, tag, value: data } = parsed.value;
    if (tag === 'issue' || tag === 'issuewild') {
      const issuer = caaIssuer(data);
      if (!issuer.ok) return fail(`${tag} value ${issuer.message} (RFC 8659 §4.2: "ca.example; key=value" or ";")`);
    }
    if (tag === 'iodef' && !/^(mailto:\S+@\S+|https?:\/\/\S+)$/i.test(data)) return fail('iodef value must be a mailto: or http(s): URL');
    return ok(`${flags} ${tag} ${quoteTxtString(Buffer.from(data, 'latin1'))}`);
  },
  zoneData: (value) => value,
  rdata(value) {
    const { flags, tag, value: data } = caaFields(value);
    return Buffer.concat([u8(flags), u8(tag.length), Buffer.from(tag, 'latin1'), Buffer.from(data, 'latin1')]);
  },
};
