// SVCB and HTTPS RDATA (RFC 9460 §2.2): SvcPriority, TargetName never compressed, then the
// SvcParams, already in wire form (keys increasing) since the record was built.
import { paramsWire, parseSvcb } from '../../model/values/svcb.ts';
import type { WireWriter } from './writer.ts';

export interface SvcbRData {
  type: 64 | 65;
  priority: number;
  /** Absolute, lower case, no final dot; "" is the root. */
  target: string;
  /** The SvcParams as sent. */
  params: Buffer;
}

/** The RDATA of a stored (canonical) SVCB or HTTPS value. */
export function svcbRdata(type: 64 | 65, value: string): SvcbRData {
  // The canonical form names its target absolutely: the zone plays no part in reading it back.
  const parsed = parseSvcb(value, '');
  if (!parsed.ok) throw new Error(`stored ${type === 64 ? 'SVCB' : 'HTTPS'} value does not parse: ${parsed.message}`);
  const { priority, target, params } = parsed.value;
  return { type, priority, target, params: paramsWire(params) };
}

export function writeSvcbRdata(w: WireWriter, r: SvcbRData): void {
  w.u16(r.priority);
  w.name(r.target, false);
  w.bytes(r.params);
}

/** What makes two SVCB RDATAs equal, as a string (Latin-1: one char per octet). */
export const svcbKey = (r: SvcbRData): string => `${r.priority} ${r.target} ${r.params.toString('latin1')}`;
