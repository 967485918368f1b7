// Protocol upgrades (WebSocket) through the edge: the client's upgrade request goes to the backend
// with the same forwarding headers as any request; on 101 the two sockets are joined both ways
// for as long as either side keeps its end open; any other answer is passed back as it came.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Backend } from '../model/backend.ts';

function head(status: number, message: string, headers: IncomingMessage['rawHeaders']): string {
  const lines = [`HTTP/1.1 ${status} ${message}`];
  for (let i = 0; i < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Joins `client` to the backend's upgraded socket; resolves with the status the backend gave. */
export function proxyUpgrade(req: IncomingMessage, client: Duplex, clientHead: Buffer, backend: Backend, host: string, clientAddress: string, connectTimeoutMs: number, scheme: 'http' | 'https'): Promise<number> {
  return new Promise((resolve) => {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && name !== 'x-forwarded-for') headers[name] = value;
    headers['x-forwarded-for'] = clientAddress;
    headers['x-forwarded-proto'] = scheme;
    headers['x-forwarded-host'] = host;
    headers.via = '1.1 palisade';
    const upstream = httpRequest({ host: backend.address, family: backend.family, port: backend.port, method: req.method, path: req.url, headers });
    // Bounds the connect only: an upgraded connection may stay quiet for as long as its ends like.
    upstream.on('socket', (socket) => {
      const timer = setTimeout(() => upstream.destroy(new Error('connect timeout')), connectTimeoutMs);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    upstream.on('upgrade', (answer, socket, upstreamHead) => {
      client.write(head(101, 'Switching Protocols', answer.rawHeaders));
      if (upstreamHead.length > 0) client.write(upstreamHead);
      if (clientHead.length > 0) socket.write(clientHead);
      socket.pipe(client).pipe(socket);
      const close = () => {
        socket.destroy();
        client.destroy();
      };
      socket.on('error', close);
      client.on('error', close);
      socket.on('close', close);
      client.on('close', close);
      resolve(101);
    });
    upstream.on('response', (answer) => {
      client.write(head(answer.statusCode ?? 502, answer.statusMessage ?? '', answer.rawHeaders));
      answer.pipe(client);
      resolve(answer.statusCode ?? 502);
    });
    upstream.on('error', () => {
      client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: 24\r\nconnection: close\r\n\r\nthe backend is not there');
      resolve(502);
    });
    client.on('error', () => upstream.destroy());
    upstream.end();
  });
}
