// Listening on a port, with an error that says which listener could not.
import type { Server } from 'node:net';

/** Listens; resolves with the port the server got. `reusePort`: SO_REUSEPORT (the edge role's workers each listen). */
export function listenOn(server: Server, host: string, port: number, reusePort: boolean, what: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, reusePort }, () => {
      server.off('error', reject);
      resolve((server.address() as { port: number }).port);
    });
  }).catch((error: NodeJS.ErrnoException) => {
    throw Object.assign(new Error(`cannot listen on ${host}:${port} for ${what} (${error.code ?? error.message})`), { code: error.code });
  });
}
