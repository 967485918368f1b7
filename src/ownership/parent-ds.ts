// A domain's DS set as its parent zone holds it (RFC 4035: the DS lives on the parent side of the
// cut), seen the way delegations are (delegation.ts): in `parent` mode the nearest zone above the
// name is found through the resolver (PALISADE_DELEGATION_RESOLVER) and its servers are asked
// without recursion, following referrals down a few hops; in `resolver` mode the resolver's
// answer is taken. Node's resolver has no DS type, so the one question is asked here: over UDP
// with EDNS (1,232 bytes), and again over TCP when the answer comes truncated — a DS set read from
// a truncated answer could lack our key's DS and be taken for "gone", which would end signing
// while the parent still vouches for it.
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { randomInt } from 'node:crypto';
import { isIP } from 'node:net';
import type { Resolver } from 'node:dns/promises';
import { ancestorsOf } from '../store/name-tree.ts';
import { serverAddresses } from './delegation.ts';

/** The DS set (presentation form) and its TTL; [] when the parent holds none; undefined when nothing definite was answered. */
export type ParentDsLookup = (name: string) => Promise<{ ds: string[]; ttl: number } | undefined>;

const DS = 43;
const NS = 2;
const SOA = 6;
const HOPS = 4;

const canonical = (name: string) => name.toLowerCase().replace(/\.$/, '');

interface Record {
  name: string;
  type: number;
  ttl: number;
  rdata: Buffer;
  /** For NS: the target name. */
  target?: string;
}

interface Response {
  rcode: number;
  /** TC: the server had more to say than the datagram held. */
  truncated: boolean;
  answers: Record[];
  authorities: Record[];
}

/** EDNS's UDP payload size offered (the DNS flag day's): a DS set of a few keys fits; more goes over TCP. */
const UDP_PAYLOAD = 1232;
/** A TCP answer is at most 65,535 bytes after its length. */
const TCP_MAX = 2 + 0xffff;

function encodeQuery(id: number, name: string, type: number, recursive: boolean): Buffer {
  const labels = canonical(name).split('.').filter((l) => l !== '');
  const qname = Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'ascii')])), Buffer.from([0])]);
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(recursive ? 0x0100 : 0, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(1, 10);
  const tail = Buffer.alloc(4);
  tail.writeUInt16BE(type, 0);
  tail.writeUInt16BE(1, 2);
  // The OPT pseudo-record (RFC 6891): root owner, type 41, the payload size as its class, no flags.
  const opt = Buffer.alloc(11);
  opt.writeUInt16BE(41, 1);
  opt.writeUInt16BE(UDP_PAYLOAD, 3);
  return Buffer.concat([header, qname, tail, opt]);
}

/** A name at `offset` (compression pointers followed, bounded); its end in the message. */
function readName(buf: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let end = -1;
  for (let jumps = 0; jumps < 64; jumps++) {
    const length = buf[offset];
    if (length === undefined) throw new Error('truncated name');
    if (length === 0) return { name: labels.join('.'), end: end < 0 ? offset + 1 : end };
    if ((length & 0xc0) === 0xc0) {
      if (end < 0) end = offset + 2;
      offset = ((length & 0x3f) << 8) | buf[offset + 1]!;
      continue;
    }
    labels.push(buf.subarray(offset + 1, offset + 1 + length).toString('ascii').toLowerCase());
    offset += 1 + length;
  }
  throw new Error('name compression loop');
}

function decodeResponse(buf: Buffer, id: number): Response | undefined {
  if (buf.length < 12 || buf.readUInt16BE(0) !== id) return undefined;
  const flags = buf.readUInt16BE(2);
  const counts = [buf.readUInt16BE(4), buf.readUInt16BE(6), buf.readUInt16BE(8)];
  let offset = 12;
  for (let i = 0; i < counts[0]!; i++) offset = readName(buf, offset).end + 4;
  const section = (count: number): Record[] => {
    const out: Record[] = [];
    for (let i = 0; i < count; i++) {
      const { name, end } = readName(buf, offset);
      const type = buf.readUInt16BE(end);
      const ttl = buf.readUInt32BE(end + 4);
      const length = buf.readUInt16BE(end + 8);
      const start = end + 10;
      const record: Record = { name, type, ttl, rdata: buf.subarray(start, start + length) };
      if (type === NS) record.target = readName(buf, start).name;
      out.push(record);
      offset = start + length;
    }
    return out;
  };
  return { rcode: flags & 0x0f, truncated: (flags & 0x0200) !== 0, answers: section(counts[1]!), authorities: section(counts[2]!) };
}

/** One question over UDP, asked again over TCP when the answer is truncated; undefined on a timeout or an unreadable answer. */
export async function askOnce(address: string, port: number, name: string, type: number, recursive: boolean, timeoutMs: number): Promise<Response | undefined> {
  const response = await askUdp(address, port, name, type, recursive, timeoutMs);
  return response?.truncated ? askTcp(address, port, name, type, recursive, timeoutMs) : response;
}

function askUdp(address: string, port: number, name: string, type: number, recursive: boolean, timeoutMs: number): Promise<Response | undefined> {
  return new Promise((resolve) => {
    const socket = createSocket(isIP(address) === 6 ? 'udp6' : 'udp4');
    const id = randomInt(0, 0x10000);
    const done = (response: Response | undefined) => {
      clearTimeout(timer);
      socket.close();
      resolve(response);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.on('error', () => done(undefined));
    socket.on('message', (message, from) => {
      // Only the server asked answers (as dns2's client checks for the delegation lookups): a
      // datagram from anywhere else with a guessed ID is dropped, never read as the parent's DS.
      if (from.port !== port || from.address !== address) return;
      // Truncated: what it holds may not even parse; the question goes to TCP.
      if (message.length >= 12 && message.readUInt16BE(0) === id && (message[2]! & 0x02) !== 0) return done({ rcode: message[3]! & 0x0f, truncated: true, answers: [], authorities: [] });
      try {
        const response = decodeResponse(message, id);
        if (response) done(response);
      } catch {
        done(undefined);
      }
    });
    socket.send(encodeQuery(id, name, type, recursive), port, address);
  });
}

/** The question over TCP (RFC 7766): one length-prefixed message each way, on a connection to the server asked. */
function askTcp(address: string, port: number, name: string, type: number, recursive: boolean, timeoutMs: number): Promise<Response | undefined> {
  return new Promise((resolve) => {
    const id = randomInt(0, 0x10000);
    const query = encodeQuery(id, name, type, recursive);
    const socket = connect({ host: address, port });
    let received = Buffer.alloc(0);
    const done = (response: Response | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(response);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.on('error', () => done(undefined));
    socket.on('connect', () => socket.write(Buffer.concat([Buffer.from([query.length >> 8, query.length & 0xff]), query])));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length > TCP_MAX) return done(undefined);
      if (received.length < 2 || received.length < 2 + received.readUInt16BE(0)) return;
      try {
        const response = decodeResponse(received.subarray(2, 2 + received.readUInt16BE(0)), id);
        // A truncated answer over TCP is still not the whole set: nothing definite.
        done(response && !response.truncated ? response : undefined);
      } catch {
        done(undefined);
      }
    });
    socket.on('end', () => done(undefined));
  });
}

/** The DS RDATA in presentation form: `<tag> <alg> <digest type> <HEX>`. */
const dsText = (rdata: Buffer) => `${rdata.readUInt16BE(0)} ${rdata[2]} ${rdata[3]} ${rdata.subarray(4).toString('hex').toUpperCase()}`;

/** What a response says of the name's DS set: found, none, a referral deeper down, or nothing definite. */
function dsOf(response: Response | undefined, name: string): { ds: string[]; ttl: number } | { referral: { owner: string; servers: string[] } } | undefined {
  if (!response) return undefined;
  if (response.rcode === 3) return { ds: [], ttl: 0 };
  if (response.rcode !== 0) return undefined;
  const ds = response.answers.filter((r) => r.type === DS && r.name === name && r.rdata.length > 4);
  if (ds.length > 0) return { ds: ds.map((r) => dsText(r.rdata)), ttl: Math.min(...ds.map((r) => r.ttl)) };
  const cut = response.authorities.find((r) => r.type === NS && r.name !== name && name.endsWith(`.${r.name}`));
  if (cut) return { referral: { owner: cut.name, servers: response.authorities.filter((r) => r.type === NS && r.name === cut.name).map((r) => r.target!) } };
  // No data: a parent's answer carries its SOA (RFC 2308). Anything else (a referral to the child
  // itself, from a server that does not serve the parent) says nothing of the parent's DS.
  if (response.authorities.some((r) => r.type === SOA)) return { ds: [], ttl: 0 };
  return undefined;
}

/** `resolver` mode: the resolver (address:port) asked with recursion. */
export function resolverDs(server: string, timeoutMs: number): ParentDsLookup {
  const [address, port] = splitHostPort(server);
  return async (name) => {
    const seen = dsOf(await askOnce(address, port, name, DS, true, timeoutMs), canonical(name));
    return seen && 'ds' in seen ? seen : undefined;
  };
}

/** `parent` mode: the parent zone's servers (found through `resolver`) asked without recursion, on `port`. */
export function parentDs(resolver: Resolver, options: { port: number; timeoutMs: number }): ParentDsLookup {
  const addressesOf = (servers: readonly string[]) => serverAddresses(resolver, servers);
  const none = (error: NodeJS.ErrnoException) => (error.code === 'ENOTFOUND' || error.code === 'ENODATA' ? [] : undefined);
  return async (asked) => {
    const name = canonical(asked);
    let servers: string[] | undefined;
    for (const ancestor of ancestorsOf(name)) {
      const found = await resolver.resolveNs(ancestor).then((names) => names.map(canonical), none);
      if (found === undefined) return undefined;
      if (found.length > 0) {
        servers = found;
        break;
      }
    }
    if (!servers) return undefined;
    for (let hop = 0; hop < HOPS; hop++) {
      let referral: { owner: string; servers: string[] } | undefined;
      for (const address of await addressesOf(servers)) {
        const seen = dsOf(await askOnce(address, options.port, name, DS, false, options.timeoutMs), name);
        if (!seen) continue;
        if ('ds' in seen) return seen;
        referral = seen.referral;
        break;
      }
      if (!referral) return undefined;
      servers = referral.servers;
    }
    return undefined;
  };
}

function splitHostPort(text: string): [string, number] {
  const bracketed = /^\[(.+)\]:(\d+)$/.exec(text);
  if (bracketed) return [bracketed[1]!, Number(bracketed[2])];
  const at = text.lastIndexOf(':');
  if (at > 0 && text.indexOf(':') === at) return [text.slice(0, at), Number(text.slice(at + 1))];
  return [text, 53];
}
