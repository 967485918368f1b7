// One request to an edge's TLS port over the protocol a test names: HTTP/1.1 (ALPN http/1.1, a
// fresh connection) or HTTP/2 (Node's http2 client, ALPN h2). The same call for both, so that one
// test body runs over each (describe.each).
import { connect as h2connect, constants } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';

export type EdgeProtocol = 'http/1.1' | 'h2';
export const EDGE_PROTOCOLS: EdgeProtocol[] = ['http/1.1', 'h2'];

export interface EdgeRequest {
  port: number;
  /** The SNI (default: the authority's name). */
  servername?: string;
  /** Host (HTTP/1.1) or :authority (h2). */
  authority: string;
  path: string;
  method?: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
  /** The client's own address (a loopback one), to be one client or another for the edge's limits. */
  localAddress?: string;
}

export interface EdgeAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The protocol the connection negotiated. */
  alpn: string | false;
}

export function fetchOver(protocol: EdgeProtocol, r: EdgeRequest): Promise<EdgeAnswer> {
  return protocol === 'h2' ? fetchH2(r) : fetchH1(r);
}

const sniOf = (r: EdgeRequest) => r.servername ?? r.authority.replace(/:\d+$/, '');

function fetchH1(r: EdgeRequest): Promise<EdgeAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { host: r.authority, ...r.headers };
    if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body));
    const req = httpsRequest(
      { host: '127.0.0.1', port: r.port, path: r.path, method: r.method ?? 'GET', headers, servername: sniOf(r), rejectUnauthorized: false, agent: false, ALPNProtocols: ['http/1.1'], localAddress: r.localAddress } as import('node:https').RequestOptions,
      (res) => {
        let body = '';
        res.setEncoding('latin1');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body, alpn: (res.socket as import('node:tls').TLSSocket).alpnProtocol ?? false }));
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')));
    req.on('error', reject);
    req.end(r.body);
  });
}

function fetchH2(r: EdgeRequest): Promise<EdgeAnswer> {
  return new Promise((resolve, reject) => {
    // The URL only names the scheme: the authority is the request's own, the connection ours.
    const session = h2connect('https://localhost', {
      // (localAddress is passed on to net.connect; the TLS typings leave it out.)
      createConnection: () => tlsConnect({ host: '127.0.0.1', port: r.port, servername: sniOf(r), rejectUnauthorized: false, ALPNProtocols: ['h2'], localAddress: r.localAddress } as ConnectionOptions),
    });
    session.on('error', reject);
    const method = r.method ?? 'GET';
    const stream = session.request({ [constants.HTTP2_HEADER_METHOD]: method, [constants.HTTP2_HEADER_PATH]: r.path, [constants.HTTP2_HEADER_AUTHORITY]: r.authority, ...r.headers }, { endStream: r.body === undefined });
    stream.setTimeout(10_000, () => stream.destroy(new Error('no answer in 10 s')));
    let status = 0;
    let headers: Record<string, string | string[] | undefined> = {};
    let body = '';
    stream.on('response', (h) => {
      status = Number(h[':status']);
      headers = h;
    });
    stream.setEncoding('latin1');
    stream.on('data', (c: string) => (body += c));
    stream.on('end', () => {
      const alpn = session.alpnProtocol ?? false;
      session.close();
      resolve({ status, headers, body, alpn });
    });
    stream.on('error', (error) => {
      session.destroy();
      reject(error);
    });
    if (r.body !== undefined) stream.end(r.body);
  });
}
