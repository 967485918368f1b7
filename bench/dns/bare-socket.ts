// The floor for a Node name server: a plain dgram socket (no dns2, no handler, no metrics) that
// answers each question with the reply bytes it computed the first time it saw it, the ID (and
// nothing else) patched. What this reaches on one core is what the runtime allows; the gap to the
// harness (server-process.ts) is our per-query work and dns2's. Prints "ready PORT".
//   BENCH_ZONES=1000 node --import tsx bench/dns/bare-socket.ts
import { createSocket } from 'node:dgram';
import { pino } from 'pino';
import { DnsServer } from '../../src/dns/dns-server.ts';
import { DEFAULT_TCP_LIMITS } from '../../src/dns/server/tcp-limits.ts';
import { HOSTMASTER, NS, workloadZones } from './workload.ts';

const zones = Number(process.env.BENCH_ZONES ?? 1000);
const server = new DnsServer({ host: '127.0.0.1', port: 0, nameservers: NS, hostmaster: HOSTMASTER, tcp: DEFAULT_TCP_LIMITS, handler: { cache: false }, log: pino({ level: 'warn' }) });
server.index.replaceAll(workloadZones(zones, 1, false), [], 0);

/** Replies by the query's bytes after its ID. */
const replies = new Map<string, Buffer>();
// The kernel buffers serve's listener asks for (4 MiB): without them a stall drops queries here
// where serve queues them, and the floor's latency would hide in its losses.
const socket = createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024, sendBufferSize: 4 * 1024 * 1024, lookup: (address, _options, callback) => callback(null, address, 4) });
socket.on('message', (packet, rinfo) => {
  const key = packet.toString('latin1', 2);
  let reply = replies.get(key);
  if (!reply) {
    reply = server.handler.handle(packet, 'udp', rinfo);
    if (!reply) return;
    replies.set(key, reply);
  }
  const out = Buffer.allocUnsafe(reply.length);
  reply.copy(out);
  out[0] = packet[0]!;
  out[1] = packet[1]!;
  socket.send(out, rinfo.port, rinfo.address);
});
socket.bind(Number(process.env.BENCH_PORT ?? 0), '127.0.0.1', () => console.log(`ready ${socket.address().port}`));
process.on('SIGTERM', () => socket.close(() => process.exit(0)));
