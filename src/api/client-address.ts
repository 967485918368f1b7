// The address a rate limit counts by: an IPv4 address, or an IPv6 /64 (one customer LAN or host
// usually has a whole /64, so counting single IPv6 addresses would let one client be millions).
import { isIPv6 } from 'node:net';
import { canonicalIp, ipToBytes } from '../model/ip.ts';

export function rateLimitAddress(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  const canonical = canonicalIp(ip);
  if (!canonical) return ip;
  return `${Buffer.from(ipToBytes(canonical.address).subarray(0, 8)).toString('hex')}/64`;
}
