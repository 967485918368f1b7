// Carries one request to a domain's backend and its answer back, streaming both ways (bodies are
// never held whole), over pooled keep-alive connections. Hop-by-hop headers stay on their hop;
// the backend learns the client (X-Forwarded-For, set from the TCP peer: a client's own value is
// not trusted), the scheme and host it asked for, and that we passed it on (Via). When the
// backend is down (backend-health.ts) the failover takes the request; when a connect fails and the
// domain has a failover, a request without a body is tried there at once.
import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseBackend, type Backend } from '../model/backend.ts';
import type { DomainState } from '../model/domain.ts';
import type { BackendHealth } from './backend-health.ts';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const VIA = '1.1 palisade';

export interface ProxyOutcome {
  status: number;
  /** Response body bytes passed to the client. */
  bytes?: number;
  /** Milliseconds until the backend's response headers arrived (undefined when none did). */
  upstreamMs?: number;
  /** Which backend answered, or why none did. */
  via: 'backend' | 'failover' | 'unreachable' | 'timeout' | 'too-large';
}

/** What the caller does with a backend's response as it starts: add headers, tap the body (the cache). */
export type ResponseHook = (status: number, headers: Record<string, string | string[]>) => BodyTap | undefined;

export interface BodyTap {
  chunk(data: Buffer): void;
  /** `complete` false: the response was cut short. */
  end(complete: boolean): void;
}

export interface ProxyOptions {
  connectTimeoutMs: number;
  /** Longest wait for the backend's response headers. */
  responseTimeoutMs: number;
  /** Largest request body passed on; a larger one is cut off with 413. */
  maxBodyBytes: number;
}

/** The headers for the next hop: hop-by-hop ones (and those `Connection` names) removed. */
function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const named = new Set(
    String(headers.connection ?? '')
      .toLowerCase()
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  return out;
}

export class Proxy {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 64, timeout: 60_000 });

  constructor(
    private readonly options: ProxyOptions,
    private readonly health: BackendHealth,
  ) {}

  async forward(req: IncomingMessage, res: ServerResponse, domain: DomainState, host: string, scheme: 'http' | 'https', hook?: ResponseHook): Promise<ProxyOutcome> {
    const backend = parseBackend(domain.backend);
    const failover = domain.failover ? parseBackend(domain.failover) : undefined;
    if (!backend) return { status: 502, via: 'unreachable' };
    const bodyless = (req.method === 'GET' || req.method === 'HEAD') && !req.headers['content-length'] && !req.headers['transfer-encoding'];
    if (failover && this.health.isDown(backend) && !this.health.isDown(failover)) {
      const outcome = await this.attempt(req, res, failover, host, scheme, hook);
      return outcome.via === 'backend' ? { ...outcome, via: 'failover' } : outcome;
    }
    const first = await this.attempt(req, res, backend, host, scheme, hook);
    if (first.via !== 'unreachable' || !failover || !bodyless) return first;
    const second = await this.attempt(req, res, failover, host, scheme, hook);
    return second.via === 'backend' ? { ...second, via: 'failover' } : second;
  }

  private attempt(req: IncomingMessage, res: ServerResponse, backend: Backend, host: string, scheme: 'http' | 'https', hook?: ResponseHook): Promise<ProxyOutcome> {
    const started = performance.now();
    const headers = forwardable(req.headers);
    headers['x-forwarded-for'] = req.socket.remoteAddress ?? '';
    headers['x-forwarded-proto'] = scheme;
    headers['x-forwarded-host'] = host;
    headers.via = req.headers.via ? `${req.headers.via}, ${VIA}` : VIA;
    return new Promise((resolve) => {
      let settled = false;
      const done = (outcome: ProxyOutcome) => {
        if (!settled) {
          settled = true;
          resolve(outcome);
        }
      };
      const upstream = httpRequest({
        host: backend.address,
        family: backend.family,
        port: backend.port,
        method: req.method,
        path: req.url,
        headers,
        agent: this.agent,
      });
      // A connect that takes too long fails like a refused one (a pooled socket is connected already).
      upstream.on('socket', (socket) => {
        if (!socket.connecting) return;
        const timer = setTimeout(() => upstream.destroy(new Error('connect timeout')), this.options.connectTimeoutMs);
        socket.once('connect', () => clearTimeout(timer));
        socket.once('close', () => clearTimeout(timer));
      });
      const headerTimer = setTimeout(() => {
        this.health.failed(backend);
        upstream.destroy(new Error('response timeout'));
        done({ status: 504, via: 'timeout' });
      }, this.options.responseTimeoutMs);
      upstream.on('error', () => {
        clearTimeout(headerTimer);
        if (!res.headersSent && !settled) this.health.failed(backend);
        // Before the response began: nothing reached the client yet, the caller answers.
        if (!res.headersSent) done({ status: 502, via: 'unreachable' });
        else res.destroy();
      });
      upstream.on('response', (answer) => {
        clearTimeout(headerTimer);
        const out = forwardable(answer.headers);
        out.via = answer.headers.via ? `${answer.headers.via}, ${VIA}` : VIA;
        const status = answer.statusCode ?? 502;
        const tap = hook?.(status, out);
        res.writeHead(status, out);
        const outcome: ProxyOutcome = { status, upstreamMs: performance.now() - started, via: 'backend', bytes: 0 };
        answer.on('data', (chunk: Buffer) => {
          outcome.bytes! += chunk.length;
          tap?.chunk(chunk);
        });
        answer.on('end', () => tap?.end(true));
        answer.on('close', () => {
          if (!answer.complete) tap?.end(false);
        });
        answer.pipe(res);
        answer.on('error', () => res.destroy());
        // 5xx (but 501/505, which say nothing of its health) counts against the backend, as connect errors and timeouts do.
        if (status >= 500 && status !== 501 && status !== 505) this.health.failed(backend);
        else this.health.passed(backend);
        done(outcome);
      });
      // A client that goes away takes its upstream request with it.
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      // A request without a body (or one tried again on the failover, its body long consumed:
      // only bodyless ones are) ends here; others stream through.
      if (req.readableEnded || (!req.headers['content-length'] && !req.headers['transfer-encoding'])) upstream.end();
      else {
        // A body without a length (chunked) is counted as it passes; past the bound it is cut off.
        let received = 0;
        req.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > this.options.maxBodyBytes && !settled) {
            clearTimeout(headerTimer);
            req.unpipe(upstream);
            upstream.destroy();
            done({ status: 413, via: 'too-large' });
          }
        });
        req.pipe(upstream);
      }
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
