// DNS Cookies (RFC 7873) with interoperable server cookies (RFC 9018): a client that shows a
// server cookie we made for its address proves it receives our answers there, so it is not a
// spoofed victim and is exempt from response-rate limiting. Every name server given the same
// secret (PALISADE_DNS_COOKIE_SECRET) accepts the others' cookies, as anycast instances must.
//
// Server cookie = Version (1) | Reserved (3, zero) | Timestamp (4, seconds) | Hash (8), with
// Hash = SipHash-2-4(Client Cookie | Version | Reserved | Timestamp | Client IP, secret).
import { ipToBytes } from '../../model/ip.ts';
import type { CookieReply } from '../chain/context.ts';
import { siphash24 } from './siphash.ts';

/** A received cookie is valid from an hour old to five minutes in the future (RFC 9018 §4.3). */
const MAX_AGE_S = 3600;
const MAX_AHEAD_S = 300;
/** A valid cookie younger than this is echoed as it came; older ones are renewed. */
const RENEW_AFTER_S = 1800;

export type { CookieReply };

export class ServerCookies {
  private readonly input = Buffer.alloc(8 + 8 + 16);

  constructor(
    private readonly secret: Buffer,
    private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000),
  ) {
    if (secret.length !== 16) throw new Error('a DNS cookie secret is 16 bytes (32 hex digits)');
  }

  private hash(clientCookie: Uint8Array, timestamp: number, clientIp: Uint8Array): Buffer {
    const input = this.input;
    input.set(clientCookie, 0);
    input.writeUInt32BE(0x01000000, 8);
    input.writeUInt32BE(timestamp >>> 0, 12);
    input.set(clientIp, 16);
    return siphash24(this.secret, input.subarray(0, 16 + clientIp.length));
  }

  /**
   * The reply to a query's cookie: `client` is its 8-byte client cookie, `server` the server
   * cookie it sent (absent, or 8–32 bytes as the option allowed), `address` where it came from.
   */
  reply(client: Uint8Array, server: Uint8Array | undefined, address: string): CookieReply {
    const ip = ipToBytes(address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address);
    const now = this.nowSeconds();
    let valid = false;
    if (server && server.length === 16 && server[0] === 1 && server[1] === 0 && server[2] === 0 && server[3] === 0) {
      const timestamp = Buffer.from(server.buffer, server.byteOffset + 4, 4).readUInt32BE(0);
      const age = (now - timestamp) | 0; // serial arithmetic (RFC 1982) over the 32-bit clock
      if (age <= MAX_AGE_S && age >= -MAX_AHEAD_S) {
        valid = this.hash(client, timestamp, ip).equals(server.subarray(8, 16));
        if (valid && age < RENEW_AFTER_S && age >= 0) {
          return { data: Buffer.concat([client, server]), valid };
        }
      }
    }
    const data = Buffer.allocUnsafe(24);
    data.set(client, 0);
    data.writeUInt32BE(0x01000000, 8);
    data.writeUInt32BE(now >>> 0, 12);
    this.hash(client, now, ip).copy(data, 16);
    return { data, valid };
  }
}
