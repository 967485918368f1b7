// RDATA encoders, one per type, side by side. Names in CNAME, NS, MX and SOA data may be
// compressed (RFC 1035 well-known types); SRV targets never are (RFC 2782), nor the names in the
// types encoded by ../../model/values (PTR, NAPTR: sent as RFC 3597 opaque data).
import type { RData } from '../zone/types.ts';
import { writeSvcbRdata } from './svcb-rdata.ts';
import type { WireWriter } from './writer.ts';

function characterString(w: WireWriter, text: string | Buffer): void {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8').subarray(0, 255) : text;
  w.u8(bytes.length);
  w.bytes(bytes);
}

export function writeRdata(w: WireWriter, r: RData): void {
  switch (r.type) {
    case 64:
    case 65:
      return writeSvcbRdata(w, r);
    case 1:
      return w.u32(r.address >>> 0);
    case 28:
      return w.bytes(r.address);
    case 5:
    case 2:
      return w.name(r.target);
    case 15:
      w.u16(r.preference);
      return w.name(r.exchange);
    case 16:
      for (const s of r.strings) characterString(w, s);
      return;
    case 33:
      w.u16(r.priority);
      w.u16(r.weight);
      w.u16(r.port);
      return w.name(r.target, false);
    case 6:
      w.name(r.mname);
      w.name(r.rname);
      w.u32(r.serial);
      w.u32(r.refresh);
      w.u32(r.retry);
      w.u32(r.expire);
      return w.u32(r.minimum);
    case 13:
      characterString(w, r.cpu);
      return characterString(w, r.os);
    case 0:
      return w.bytes(r.data);
  }
}
