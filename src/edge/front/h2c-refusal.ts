// Cleartext HTTP/2 (h2c) is not served: HTTP/2 is offered on the TLS port only (ALPN), as browsers
// speak it. A client that opens the plain HTTP port with the HTTP/2 preface ("prior knowledge")
// gets an HTTP/2 answer it can read: an empty SETTINGS frame (a server's preface) and a GOAWAY
// with HTTP_1_1_REQUIRED (RFC 9113 §7), instead of an HTTP/1.1 400 it cannot parse. Every other
// malformed request gets what Node would have answered without this listener.
import type { Duplex } from 'node:stream';

/** Node's answers to a request its parser refused (lib/_http_server.js), by the parser's code. */
const NODE_ANSWERS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

const HTTP_1_1_REQUIRED = 0xd;
const DEBUG = Buffer.from('HTTP/2 is served over TLS only (ALPN h2)');

/** An empty SETTINGS frame and a GOAWAY (last stream 0, HTTP_1_1_REQUIRED, a reason): 9 + 17 + reason bytes. */
export function h2cRefusalFrames(): Buffer {
  const settings = Buffer.from([0, 0, 0, 0x4, 0, 0, 0, 0, 0]);
  const goaway = Buffer.alloc(9 + 8 + DEBUG.length);
  goaway.writeUIntBE(8 + DEBUG.length, 0, 3);
  goaway[3] = 0x7;
  goaway.writeUInt32BE(0, 9);
  goaway.writeUInt32BE(HTTP_1_1_REQUIRED, 13);
  DEBUG.copy(goaway, 17);
  return Buffer.concat([settings, goaway]);
}

/** The plain HTTP server's `clientError`: the h2 preface refused in HTTP/2, anything else as Node does. */
export function refusePriorKnowledge(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (socket.writable && (socket as Duplex & { bytesWritten?: number }).bytesWritten === 0) {
    if (error.code === 'HPE_PAUSED_H2_UPGRADE') socket.write(h2cRefusalFrames());
    else socket.write(`HTTP/1.1 ${NODE_ANSWERS[error.code ?? ''] ?? '400 Bad Request'}\r\nConnection: close\r\n\r\n`);
  }
  socket.destroy();
}
