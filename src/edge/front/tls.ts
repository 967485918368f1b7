// The edge's TLS port: one TLS server whose handshake picks the certificate (SNI) and the protocol
// (ALPN: `h2` or `http/1.1`, the client's choice), then hands the connection to the front that
// speaks it. The HTTP/1.1 path is the one it always was (front/http1.ts); a client that offers no
// ALPN speaks HTTP/1.1. The connection stages run here, on the TCP connection, before the handshake.
import { createServer, type Server, type TLSSocket } from 'node:tls';
import type { Socket } from 'node:net';
import type { EdgeParts } from '../stage/parts.ts';
import type { ChainRunner } from '../stage/run.ts';
import type { Http1Front } from './http1.ts';
import type { Http2Front } from './http2.ts';

export class TlsFront {
  readonly server: Server;

  constructor(parts: EdgeParts, chain: ChainRunner, http1: Http1Front, http2: Http2Front) {
    this.server = createServer({ SNICallback: parts.sni.callback, ALPNProtocols: ['h2', 'http/1.1'], ...parts.fallbackCertificate });
    this.server.on('connection', (socket: Socket) => {
      // A peer whose h2 connection was just ended for a flood: refused before the handshake costs anything.
      if (http2.refuses(socket)) {
        parts.metrics.blocked('h2-flood-cool-off');
        return void socket.destroy();
      }
      void chain.accept(socket);
    });
    this.server.on('secureConnection', (socket: TLSSocket) => {
      if (socket.alpnProtocol === 'h2') http2.serve(socket);
      else http1.serveTls(socket);
    });
    // A failed handshake is the client's affair (scanners, old clients): nothing to log.
    this.server.on('tlsClientError', () => undefined);
  }
}
