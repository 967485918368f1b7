// A real HTTP backend on a fixed loopback port that a test stops (every connection cut, as a
// crashed server) and starts again on the same port — what an outage looks like to an edge.
import { createServer, type RequestListener } from 'node:http';
import type { Socket } from 'node:net';

export interface StoppableBackend {
  stop(): Promise<void>;
}

export async function startBackendAt(port: number, handler: RequestListener): Promise<StoppableBackend> {
  const sockets = new Set<Socket>();
  const server = createServer(handler);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // The port may be taken for a moment (a client's connection using it as its own): try again.
  for (let attempt = 0; ; attempt++) {
    const error = await new Promise<Error | undefined>((resolve) => {
      server.once('error', resolve);
      server.listen(port, '127.0.0.1', () => resolve(undefined));
    });
    if (!error) break;
    if (attempt > 50) throw error;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
