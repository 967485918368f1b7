// Ending a connection whose request body is refused unread, under body pressure (the body buffer
// budget spent): the answer goes out as on a kept-alive connection, the sending side is shut (the
// client reads the answer, then the end), and after a short while the connection is closed,
// whatever the client still sent — a socket closed at once with unread bytes makes the kernel send a
// reset that can reach the client before it has read the answer. Unlike common/lingering-close.ts,
// nothing more of the body is read meanwhile: Node would drain a refused request's body at full
// speed, and draining is what a refusal for memory cannot afford (40 refused 16 MiB bodies drained
// took the edge from 93 to 230 MiB; left unread, 86 to 115 MiB). Marking the request as read by us
// (one read of at most its buffer's worth) keeps Node from draining it. A client that writes its
// whole body before reading may see the reset instead of the answer: the price of not reading.
import type { ServerResponse } from 'node:http';

/** How long the client has to read the answer before its connection is closed. */
export const LINGER_MS = 2000;

/** The answer on `res` is to end its connection: written, then the sending side shut, then closed after `lingerMs`. */
export function closeAfterAnswer(res: ServerResponse, lingerMs = LINGER_MS): void {
  const socket = res.socket;
  if (!socket) return;
  // Read by us (Node then leaves the rest unread): what is read stops at the request's buffer.
  res.req.read(0);
  res.once('finish', () => {
    if (socket.destroyed) return;
    socket.end();
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
