// Ending a connection whose request body is still arriving, without losing the answer: a socket
// closed with unread bytes in its receive queue makes the kernel send a reset, and a reset can
// reach the client before it has read the answer (nginx's `lingering_close` for the same reason).
// So the answer goes out as on a kept-alive connection, then only the sending side is shut; what
// the client still sends is read and thrown away (Node drops a refused request's body) for a
// short while, then the connection is closed whatever remains.
import type { ServerResponse } from 'node:http';

/** How long a refused client's remaining body is read and dropped before its connection closes. */
export const LINGER_MS = 2000;

/** Answers on `res` are to end its connection once written: shut the sending side, linger, close. */
export function closeAfterAnswer(res: ServerResponse, lingerMs = LINGER_MS): void {
  const socket = res.socket;
  if (!socket) return;
  res.once('finish', () => {
    if (socket.destroyed) return;
    socket.end();
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
