// The authoritative DNS server: a zone index, the query handler, and UDP + TCP listeners on one
// address and port. What feeds the index (the store in-process, or a remote API) is the caller's.
import { isIPv6 } from 'node:net';
import type { Logger } from 'pino';
import { ServerCookies } from './cookies/server-cookies.ts';
import { QueryHandler, type HandlerOptions } from './server/handler.ts';
import { DnsMetrics } from './server/metrics.ts';
import { ResponseRateLimiter, type RateLimitOptions } from './server/rate-limit.ts';
import { TcpListener, type TcpLimits } from './server/tcp.ts';
import { UdpListener } from './server/udp.ts';
import { ZoneIndex } from './zone/index.ts';

export interface DnsServerOptions {
  host: string;
  /** 0 picks a free port (the same number for UDP and TCP). */
  port: number;
  nameservers: readonly [string, string];
  hostmaster: string;
  tcp: TcpLimits;
  handler?: HandlerOptions;
  /** UDP response-rate limiting; absent or rate 0 = off. Clients with a valid server cookie are exempt. */
  rateLimit?: RateLimitOptions;
  /** DNS Cookies secret (16 bytes); absent = cookies ignored. */
  cookieSecret?: Buffer;
  log: Logger;
}

export class DnsServer {
  readonly index: ZoneIndex;
  readonly metrics = new DnsMetrics();
  readonly handler: QueryHandler;
  readonly rateLimiter: ResponseRateLimiter | undefined;
  private udp: UdpListener | undefined;
  private tcp: TcpListener | undefined;

  constructor(private readonly options: DnsServerOptions) {
    this.index = new ZoneIndex({ nameservers: options.nameservers, hostmaster: options.hostmaster });
    let lastLogged = 0;
    this.handler = new QueryHandler(this.index, this.metrics, {
      ...options.handler,
      cookies: options.cookieSecret && new ServerCookies(options.cookieSecret),
      // At most one line a second: a packet that trips a bug may arrive by the thousand.
      onError: (error) => {
        if (Date.now() - lastLogged < 1000) return;
        lastLogged = Date.now();
        options.log.error({ err: error }, 'dns: internal error answering a query (answered SERVFAIL)');
      },
    });
    this.metrics.zonesServed = () => this.index.size;
    this.metrics.deferredRebuilds = () => this.index.deferredRebuilds;
    const limit = options.rateLimit;
    this.rateLimiter = limit && limit.rate > 0 ? new ResponseRateLimiter(limit) : undefined;
    this.metrics.rateLimited = () => this.rateLimiter?.limited ?? 0;
  }

  /** Binds UDP and TCP; returns the port. */
  async listen(): Promise<number> {
    const { host, log } = this.options;
    const family = isIPv6(host) ? 6 : 4;
    for (let attempt = 0; attempt < 20; attempt++) {
      const udp = UdpListener.create(this.handler, family, log);
      if (this.rateLimiter) udp.limit(this.rateLimiter);
      // dns2's listen() only resolves; a failed bind arrives as an 'error' event.
      await new Promise<void>((resolve, reject) => {
        const failed = (error: Error) => {
          udp.close();
          reject(error);
        };
        udp.once('error', failed);
        void udp.listen(this.options.port, host).then(() => {
          udp.off('error', failed);
          resolve();
        });
      });
      const port = udp.address().port;
      const tcp = TcpListener.create(this.handler, this.metrics, this.options.tcp, log);
      const bound = await new Promise<boolean>((resolve, reject) => {
        tcp.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' && this.options.port === 0 ? resolve(false) : reject(error)));
        tcp.listen({ port, host }, () => resolve(true));
      });
      if (bound) {
        this.udp = udp;
        this.tcp = tcp;
        return port;
      }
      // A random UDP port whose TCP twin is taken: try another.
      udp.close();
    }
    throw new Error('dns: could not bind UDP and TCP to the same free port');
  }

  async close(): Promise<void> {
    await this.tcp?.shutdown();
    await new Promise<void>((resolve) => (this.udp ? this.udp.close(() => resolve()) : resolve()));
  }
}
