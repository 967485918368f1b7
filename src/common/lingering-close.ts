// Lingering close, as nginx does it: when a response is sent before the request's body was read (a
// 413 past the body limit, a 401 before the body matters), closing at once with the client's
// unread bytes in the kernel's buffer sends a TCP reset, and a client that sends its whole body
// before reading (Python's http.client, Node's fetch, curl without `Expect: 100-continue`) reports
// a broken pipe and never sees the answer. Instead: answer with `Connection: close`, send FIN after
// the response, and read and discard what the client still sends, within bounds, before closing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface LingerLimits {
  /** The most bytes read and discarded after the response; past it the connection is reset. */
  maxBytes: number;
  /** The longest a connection lingers in all. */
  maxMs: number;
  /** The longest a connection lingers with nothing arriving. */
  idleMs: number;
}

/** nginx's defaults are 30 s / 5 s; ours are shorter: the client only has to finish its upload. */
export const LINGER_LIMITS: LingerLimits = { maxBytes: 64 * 1_048_576, maxMs: 10_000, idleMs: 2_000 };

const LINGERING = Symbol('palisade.lingering');

/**
 * Call before the response's headers are written. When the request's body has not been read to its
 * end, the response says `Connection: close`, and when Node closes the connection after it, the
 * socket lingers instead: write side shut, the rest of the body read and dropped, then closed.
 */
export function lingerBeforeClose(request: IncomingMessage, response: ServerResponse, limits: LingerLimits = LINGER_LIMITS): void {
  if (request.complete || response.headersSent) return;
  const socket = request.socket as Socket & { [LINGERING]?: true };
  if (socket[LINGERING] || socket.destroyed) return;
  socket[LINGERING] = true;
  response.setHeader('connection', 'close');
  // Node's HTTP server calls destroySoon() after the last response of a closing connection; taking
  // its place keeps the read side open while the client finishes sending.
  socket.destroySoon = function lingerThenClose(this: Socket) {
    linger(this, limits);
  };
}

function linger(socket: Socket, limits: LingerLimits): void {
  let read = 0;
  const close = () => {
    clearTimeout(overall);
    clearTimeout(idle);
    socket.off('data', count);
    if (!socket.destroyed) socket.destroy();
  };
  let idle = setTimeout(close, limits.idleMs);
  const overall = setTimeout(close, limits.maxMs);
  const count = (chunk: Buffer) => {
    read += chunk.length;
    if (read > limits.maxBytes) return close();
    idle.refresh();
  };
  socket.on('data', count);
  socket.once('end', close);
  socket.once('close', close);
  // The response's bytes first, then FIN: the client reads its answer whatever it sends next.
  if (socket.writable) socket.end();
  // Node's parser owns the socket and may have paused it; the body's bytes go nowhere.
  socket.resume();
  idle = idle.unref();
  overall.unref();
}
