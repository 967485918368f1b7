// SVCB and HTTPS RDATA on the wire (RFC 9460 §2.2): SvcPriority, TargetName never compressed,
// then the SvcParams, already in wire form (keys increasing) since the zone was built.
import type { SvcbRData } from '../zone/types.ts';
import type { WireWriter } from './writer.ts';

export function writeSvcbRdata(w: WireWriter, r: SvcbRData): void {
  w.u16(r.priority);
  w.name(r.target, false);
  w.bytes(r.params);
}
