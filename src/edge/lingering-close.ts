// Ending a connection whose request body is still arriving, without losing the answer and without
// reading the body: a socket closed with unread bytes in its receive queue makes the kernel send a
// reset, and a reset can reach the client before it has read the answer (why nginx lingers). So
// the answer goes out as on a kept-alive connection, the sending side is shut (the client reads
// the answer, then its end), and only after a short while is the connection closed, whatever the
// client still sent. Meanwhile nothing more of the body is read: Node would drain a refused
// request's body at full speed (every refused megabyte read into memory and dropped); marking the
// request as read by us (one read of at most its buffer's worth) keeps it from doing so.
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
