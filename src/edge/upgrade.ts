// WebSocket upgrades through the edge, once the request has passed every protection like any other
// (edge-server.ts routes it through the same stages). Only a bodiless GET asking for `websocket` is
// an upgrade (isWebSocketUpgrade; Node hands every other `Upgrade` request to the ordinary request
// path, where the header is hop-by-hop and goes no further). The backend gets a connection of its
// own that is never pooled (an upgrade the backend refuses leaves that connection in an unknown
// state, and the next tenant's request must never be read as its body), the same forwarding
// headers as any request, and the response timeout until it answers. On 101 the two sockets are
// joined both ways and bounded by an idle time; any other answer is passed back and both
// connections end. A client that leaves first takes the backend connection with it: Node hands an
// upgrade's socket over unread, and a socket nobody reads never hears its peer's FIN (nor, half-open
// as the HTTP server keeps it, closes on it), so while the backend has not answered the client's
// socket is read here — what it sends early kept, bounded, for the backend — and its end or close
// lets go of everything at once rather than at the response timeout.
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Backend } from '../model/backend.ts';
import { forwardable, type ProxyOutcome } from './proxy.ts';

/** Bytes a client may send before the backend has answered its handshake (a WebSocket client sends none). */
const MAX_EARLY_BYTES = 64 * 1024;

export interface UpgradeOptions {
  connectTimeoutMs: number;
  /** Longest wait for the backend's answer to the upgrade request. */
  responseTimeoutMs: number;
  /** An upgraded connection silent both ways this long is closed (Cloudflare closes at 100 s). */
  idleMs: number;
}

/** The upgrades the edge carries: a GET without a body asking for the WebSocket protocol (RFC 6455 §4.1). */
export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  if (req.method !== 'GET') return false;
  if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) return false;
  const upgrade = String(req.headers.upgrade ?? '').toLowerCase().split(',').map((s) => s.trim());
  return upgrade.length === 1 && upgrade[0] === 'websocket';
}

function rawHead(status: number, message: string, headers: IncomingMessage['rawHeaders']): string {
  const lines = [`HTTP/1.1 ${status} ${message}`];
  for (let i = 0; i < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * Carries the upgrade to `backend`. `res` is the response bound to the client's socket (for any
 * answer but 101); `forwarded` the request headers to send, forwarding headers included.
 * Resolves once the backend has answered (or failed); on 101 the sockets stay joined after. Its
 * listeners, timers and the settle-once flag are one exchange's state, let go of together on
 * every path out (settle); what follows an answer (joinSockets, passAnswer) holds none of them.
 */
export function proxyUpgrade(req: IncomingMessage, res: ServerResponse, client: Duplex, clientHead: Buffer, backend: Backend, forwarded: Record<string, string | string[]>, options: UpgradeOptions): Promise<ProxyOutcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    let settled = false;
    const settle = (outcome: ProxyOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(answerTimer);
      client.off('close', clientGone);
      client.off('end', clientGone);
      client.off('data', early);
      resolve(outcome);
    };
    const headers = { ...forwarded, connection: 'Upgrade', upgrade: 'websocket' };
    // agent false: a connection of its own, closed when this exchange ends, never reused.
    const upstream = httpRequest({ host: backend.address, family: backend.family, port: backend.port, method: 'GET', path: req.url, headers, agent: false });
    // Listened for first: a destroy below (client gone, timeout) emits an error too.
    upstream.on('error', () => settle({ status: 502, via: 'unreachable' }));
    const answerTimer = setTimeout(() => {
      upstream.destroy();
      settle({ status: 504, via: 'timeout' });
    }, options.responseTimeoutMs);
    upstream.on('socket', (socket: Socket) => {
      const connectTimer = setTimeout(() => upstream.destroy(new Error('connect timeout')), options.connectTimeoutMs);
      socket.once('connect', () => clearTimeout(connectTimer));
      socket.once('close', () => clearTimeout(connectTimer));
    });
    const clientGone = (): void => {
      settle({ status: 499, via: 'client-gone' });
      upstream.destroy();
      // Half-closed (its FIN read): nothing is to be answered on it any more.
      client.destroy();
    };
    // Read until the backend answers, so that the client's leaving is heard (see the top).
    const sentEarly: Buffer[] = [];
    let earlyBytes = 0;
    const early = (chunk: Buffer): void => {
      earlyBytes += chunk.length;
      if (earlyBytes > MAX_EARLY_BYTES) return clientGone();
      sentEarly.push(chunk);
    };
    client.once('close', clientGone);
    client.once('end', clientGone);
    client.on('data', early);
    // Gone already (while the stages before ran): no backend connection is made for it.
    if (client.destroyed) return clientGone();
    upstream.on('upgrade', (answer: IncomingMessage, socket: Duplex, upstreamHead: Buffer) => {
      if (settled) return socket.destroy();
      res.detachSocket(client as Socket);
      client.write(rawHead(101, 'Switching Protocols', answer.rawHeaders));
      if (upstreamHead.length > 0) client.write(upstreamHead);
      if (clientHead.length > 0) socket.write(clientHead);
      for (const chunk of sentEarly) socket.write(chunk);
      joinSockets(client, socket, options.idleMs);
      settle({ status: 101, via: 'backend', upstreamMs: performance.now() - started });
    });
    upstream.on('response', (answer: IncomingMessage) => {
      if (settled) return answer.destroy();
      const status = passAnswer(answer, res);
      if (status === undefined) {
        answer.destroy();
        upstream.destroy();
        return settle({ status: 502, via: 'unreachable' });
      }
      settle({ status, via: 'backend', upstreamMs: performance.now() - started });
    });
    upstream.end();
  });
}

/** After a 101: the two sockets joined both ways, closed together on an error or a close of either, or after idleMs of silence both ways. */
function joinSockets(client: Duplex, socket: Duplex, idleMs: number): void {
  socket.pipe(client).pipe(socket);
  const close = (): void => {
    clearInterval(idle);
    socket.destroy();
    client.destroy();
  };
  for (const end of [socket, client]) {
    end.on('error', close);
    end.on('close', close);
  }
  // Silence both ways for idleMs ends the pair; traffic either way keeps it open.
  let last = performance.now();
  const touch = (): void => {
    last = performance.now();
  };
  socket.on('data', touch);
  client.on('data', touch);
  const idle: NodeJS.Timeout = setInterval(() => {
    if (performance.now() - last >= idleMs) close();
  }, Math.min(idleMs, 1000));
  idle.unref();
  if (client.destroyed || socket.destroyed) close();
}

/**
 * A backend's answer other than 101 passed back on `res`, its connection ending with it: the
 * status, or undefined when the answer cannot be passed on (a status Node's client accepts but no
 * response may carry, 099 or 600+, or headers `res` refuses): the backend is broken.
 */
function passAnswer(answer: IncomingMessage, res: ServerResponse): number | undefined {
  const status = answer.statusCode ?? 0;
  if (status < 100 || status > 599) return undefined;
  try {
    res.writeHead(status, forwardable(answer.headers));
  } catch {
    return undefined;
  }
  answer.pipe(res);
  // This backend connection is not reused: it ends with the answer (or with the client).
  res.once('close', () => answer.destroy());
  return status;
}
