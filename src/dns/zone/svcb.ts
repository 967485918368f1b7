// SVCB and HTTPS records as the served zone holds them: the stored (canonical) value read back
// into RDATA once, at build, with the SvcParams in wire form.
import { paramsWire, parseSvcb } from '../../model/values/svcb.ts';
import type { SvcbRData } from './types.ts';

/** The RDATA of a stored SVCB or HTTPS value. */
export function svcbRdata(type: 64 | 65, value: string): SvcbRData {
  // The canonical form names its target absolutely: the zone plays no part in reading it back.
  const parsed = parseSvcb(value, '');
  if (!parsed.ok) throw new Error(`stored ${type === 64 ? 'SVCB' : 'HTTPS'} value does not parse: ${parsed.message}`);
  const { priority, target, params } = parsed.value;
  return { type, priority, target, params: paramsWire(params) };
}

/** What makes two SVCB RDATAs equal, as a string (Latin-1: one char per octet). */
export const svcbKey = (r: SvcbRData): string => `${r.priority} ${r.target} ${r.params.toString('latin1')}`;
