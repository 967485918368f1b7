// Queries built with dns2's codec, the independent reference our own wire code is checked against.
import dns2 from 'dns2';

const { Packet } = dns2;

export interface QueryOptions {
  id?: number;
  rd?: boolean;
  cd?: boolean;
  opcode?: number;
  /** Add an OPT record (dns2 advertises 4096). */
  edns?: boolean;
  /** Add an ECS option for this prefix ("192.0.2.0/24"), implies `edns`. */
  ecs?: string;
}

export function dns2Query(name: string, type = 1, opts: QueryOptions = {}): Buffer {
  const q = new Packet();
  q.header.id = opts.id ?? 4242;
  q.header.rd = opts.rd ? 1 : 0;
  if (opts.opcode !== undefined) q.header.opcode = opts.opcode;
  // dns2's typings omit the CD bit and want a Question object; the codec takes plain fields.
  if (opts.cd) (q.header as unknown as { cd: number }).cd = 1;
  q.questions.push({ name, type, class: Packet.CLASS.IN } as unknown as (typeof q.questions)[number]);
  if (opts.edns || opts.ecs) q.additionals.push(Packet.Resource.EDNS(opts.ecs ? [Packet.Resource.EDNS.ECS(opts.ecs)] : []));
  return q.toBuffer();
}

/** dns2's decoding of a response, loosely typed for assertions. */
export function decode(buf: Buffer): any {
  return Packet.parse(buf);
}

/**
 * A query with one Client Subnet option, encoded by hand (dns2 writes IPv6 subnets as family 1):
 * `address` is the bytes as sent, ceil(prefix / 8) of them.
 */
export function queryWithSubnet(name: string, type: number, family: 1 | 2, sourcePrefix: number, address: number[]): Buffer {
  const base = dns2Query(name, type, { edns: true });
  const option = Buffer.from([0, 8, 0, 4 + address.length, 0, family, sourcePrefix, 0, ...address]);
  const out = Buffer.concat([base, option]);
  out.writeUInt16BE(option.length, base.length - 2);
  return out;
}

/** A query with one COOKIE option (RFC 7873): `cookie` is its data (client cookie, then any server cookie). */
export function queryWithCookie(name: string, type: number, cookie: Buffer, id = 4242): Buffer {
  const base = dns2Query(name, type, { edns: true, id });
  const option = Buffer.concat([Buffer.from([0, 10, 0, cookie.length]), cookie]);
  const out = Buffer.concat([base, option]);
  out.writeUInt16BE(option.length, base.length - 2);
  return out;
}

/** The COOKIE option's data in a response, read from its OPT record (the last record). */
export function responseCookie(response: Buffer): Buffer | undefined {
  const at = response.lastIndexOf(Buffer.from([0, 10]));
  if (at < 0) return undefined;
  const length = response.readUInt16BE(at + 2);
  return at + 4 + length === response.length ? response.subarray(at + 4, at + 4 + length) : undefined;
}
