// Measures what another tenant sees while big zones are written: the longest wait for a DNS
// answer (UDP, every few milliseconds) and for an API read, against a running `palisade serve`.
import { createSocket } from 'node:dgram';

export interface Probe {
  stop(): Promise<{ dnsMaxMs: number; dnsCount: number; apiMaxMs: number; apiCount: number; lost: number }>;
}

/** A minimal DNS query for `name`/A with the given id. */
function query(name: string, id: number): Buffer {
  const labels = name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(1, 4);
  return Buffer.concat([header, ...labels, Buffer.from([0, 0, 1, 0, 1])]);
}

export function startProbe(opts: { dnsPort: number; qname: string; apiUrl: string; apiPath: string; apiKey: string; everyMs?: number; lostAfterMs?: number }): Probe {
  const lostAfterMs = opts.lostAfterMs ?? 1000;
  const socket = createSocket('udp4');
  const sent = new Map<number, number>();
  let dnsMax = 0;
  let dnsCount = 0;
  let lost = 0;
  let id = 0;
  socket.on('message', (msg) => {
    const at = sent.get(msg.readUInt16BE(0));
    if (at === undefined) return;
    sent.delete(msg.readUInt16BE(0));
    dnsMax = Math.max(dnsMax, performance.now() - at);
    dnsCount++;
  });
  const timer = setInterval(() => {
    id = (id + 1) & 0xffff;
    // A query still unanswered after `lostAfterMs` (a second unless told) counts as lost, and as a wait that long.
    for (const [old, at] of sent) {
      if (performance.now() - at > lostAfterMs) {
        sent.delete(old);
        lost++;
        dnsMax = Math.max(dnsMax, lostAfterMs);
      }
    }
    sent.set(id, performance.now());
    socket.send(query(opts.qname, id), opts.dnsPort, '127.0.0.1');
  }, opts.everyMs ?? 5);
  let apiMax = 0;
  let apiCount = 0;
  let running = true;
  const apiLoop = (async () => {
    while (running) {
      const at = performance.now();
      const res = await fetch(opts.apiUrl + opts.apiPath, { headers: { 'x-auth-key': opts.apiKey } });
      await res.arrayBuffer();
      apiMax = Math.max(apiMax, performance.now() - at);
      apiCount++;
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    async stop() {
      clearInterval(timer);
      running = false;
      await apiLoop;
      await new Promise((r) => setTimeout(r, 100));
      socket.close();
      return { dnsMaxMs: dnsMax, dnsCount, apiMaxMs: apiMax, apiCount, lost: lost + sent.size };
    },
  };
}
