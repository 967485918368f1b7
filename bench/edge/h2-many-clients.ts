// An HTTP/2 load client standing for a front proxy that carries 10,000 clients: each request names
// one of them in X-Forwarded-For (the edge under test believes 127.0.0.1 as a trusted proxy), as
// bench/edge/many-clients.lua does for wrk over HTTP/1.1. h2load sends one set of headers for every
// request, so it cannot be this client. Closed loop: CONNECTIONS connections, each keeping STREAMS
// requests in flight for SECONDS. Prints one JSON line: {ok, other, errors, rps}.
//   node --import tsx bench/edge/h2-many-clients.ts PORT AUTHORITY PATH SECONDS CONNECTIONS STREAMS [CLIENTS]
import { connect, type ClientHttp2Session } from 'node:http2';

const [portText, authority, path, secondsText, connectionsText, streamsText, clientsText] = process.argv.slice(2);
if (!portText || !authority || !path) throw new Error('usage: h2-many-clients.ts PORT AUTHORITY PATH SECONDS CONNECTIONS STREAMS [CLIENTS]');
const port = Number(portText);
const seconds = Number(secondsText ?? 10);
const connections = Number(connectionsText ?? 32);
const streams = Number(streamsText ?? 4);
const clients = Number(clientsText ?? 10_000);

// The addresses made once (10.a.b.c as the wrk script spells them), taken in turn.
const addresses = Array.from({ length: clients }, (_, i) => `10.${Math.floor(i / 256) % 256}.${i % 256}.${1 + Math.floor(i / 65536)}`);
let next = 0;
let ok = 0;
let other = 0;
let errors = 0;
const deadline = performance.now() + seconds * 1000;
const started = performance.now();

function request(session: ClientHttp2Session, done: () => void): void {
  if (performance.now() >= deadline || session.destroyed) return done();
  next = (next + 1) % clients;
  const stream = session.request({ ':path': path!, ':authority': authority!, 'x-forwarded-for': addresses[next]! });
  let status = 0;
  stream.on('response', (headers) => (status = Number(headers[':status'])));
  // The body is read and dropped: the server's cost per request includes sending it.
  stream.on('data', () => undefined);
  stream.on('end', () => {
    if (status >= 200 && status < 300) ok++;
    else other++;
    request(session, done);
  });
  stream.on('error', () => {
    errors++;
    request(session, done);
  });
}

async function run(): Promise<void> {
  const sessions = await Promise.all(
    Array.from(
      { length: connections },
      () =>
        new Promise<ClientHttp2Session>((resolve, reject) => {
          const session = connect(`https://127.0.0.1:${port}`, { servername: authority, rejectUnauthorized: false, settings: { enablePush: false } });
          session.once('connect', () => resolve(session));
          session.once('error', reject);
        }),
    ),
  );
  await Promise.all(sessions.flatMap((session) => Array.from({ length: streams }, () => new Promise<void>((resolve) => request(session, resolve)))));
  const elapsed = (performance.now() - started) / 1000;
  for (const session of sessions) session.close();
  console.log(JSON.stringify({ ok, other, errors, rps: (ok + other) / elapsed }));
}

await run();
