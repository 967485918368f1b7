// A loopback port for a server a test starts, when the test must know it before the server runs
// (a consumer registered with its push URL, a secondary's ACL). Asking the kernel for port 0 and
// handing it on gave ports of the ephemeral range (32768–60999 by default), where any outgoing
// connection of any process may take it before the server binds (seen: a name server's sync port
// taken in CI, EADDRINUSE). These come from below that range, at random, checked free for TCP and
// UDP at the moment they are handed out.
import { createServer } from 'node:net';
import { createSocket } from 'node:dgram';

const LOW = 20_000;
const HIGH = 32_000;

function bindsTcp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const tcp = createServer();
    tcp.once('error', () => resolve(false));
    tcp.listen(port, '127.0.0.1', () => tcp.close(() => resolve(true)));
  });
}

function bindsUdp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const udp = createSocket('udp4');
    udp.once('error', () => {
      udp.close();
      resolve(false);
    });
    udp.bind(port, '127.0.0.1', () => udp.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if ((await bindsTcp(port)) && (await bindsUdp(port))) return port;
  }
  throw new Error(`no free loopback port in ${LOW}–${HIGH} after 1000 tries`);
}
