// A TCP client that never reads, run in a process of its own (so that the test measuring others
// does not share an event loop with it): `node --import tsx tcp-flood.ts PORT COUNT FRAME_HEX [MODE]`
// opens COUNT connections to 127.0.0.1:PORT from successive /24 networks (127.0.40.1, 127.0.41.1,
// …; 64 from each, the server's per-network share), each pipelining 2,000 copies of the framed
// query and reading nothing: one after another (MODE "one-by-one": each once the last is
// connected) or all at once. Says "started", then "ready N" once all N have sent their queries;
// runs until it is killed.
import { connect, type Socket } from 'node:net';

const [port, count, frameHex, mode] = process.argv.slice(2);
const queries = Buffer.concat(Array.from({ length: 2000 }, () => Buffer.from(frameHex!, 'hex')));
const total = Number(count);
const sockets: Socket[] = [];
let sent = 0;

function open(i: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port), localAddress: `127.0.${40 + (i >> 6)}.1` }, () => {
      socket.pause();
      socket.write(queries, () => {
        if (++sent === total) console.log(`ready ${sent}`);
      });
      resolve();
    });
    socket.on('error', () => resolve());
    sockets.push(socket);
  });
}

console.log('started');
if (mode === 'one-by-one') for (let i = 0; i < total; i++) await open(i);
else for (let i = 0; i < total; i++) void open(i);
