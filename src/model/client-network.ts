// The network a client counts against when a listener shares something out per client (DNS TCP
// connections, edge connections, a backend's pool): its address cut to a prefix, so that one host
// with many addresses of one network counts once. Pure.
import { ipToBytes } from './ip.ts';

/** The address cut to the prefix (`prefixV4` or `prefixV6` by family), as `hex/prefix`; IPv4-mapped IPv6 counts as IPv4. */
export function clientNetwork(address: string, prefixV4: number, prefixV6: number): string {
  let bytes: Uint8Array;
  try {
    bytes = ipToBytes(address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address);
  } catch {
    return address;
  }
  const prefix = bytes.length === 4 ? prefixV4 : prefixV6;
  const out = Buffer.from(bytes);
  for (let bit = prefix; bit < out.length * 8; bit++) out[bit >> 3]! &= ~(0x80 >> (bit & 7));
  return `${out.toString('hex')}/${prefix}`;
}
