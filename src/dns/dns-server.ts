// The authoritative DNS server: a zone index, the query handler, and UDP + TCP listeners on one
// address and port. What feeds the index (the store in-process, or a remote API) is the caller's.
import { isIPv6 } from 'node:net';
import type { Logger } from 'pino';
import { ServerCookies } from './cookies/server-cookies.ts';
import { QueryHandler, type HandlerOptions } from './server/handler.ts';
import { DnsMetrics } from './metrics/dns-metrics.ts';
import { ResponseRateLimiter, type RateLimitOptions } from './rate-limit/rate-limit.ts';
import { SigningBudget } from './rate-limit/signing-budget.ts';
import { TcpListener } from './server/tcp.ts';
import { TCP_BACKLOG, type TcpLimits } from './server/tcp-limits.ts';
import { UdpListener } from './server/udp.ts';
import { ZoneIndex } from './zone/index.ts';
import { Transfers, type TransferSettings } from './transfer/transfers.ts';

export interface DnsServerOptions {
  host: string;
  /** 0 picks a free port (the same number for UDP and TCP). */
  port: number;
  nameservers: readonly [string, string];
  hostmaster: string;
  tcp: TcpLimits;
  handler?: HandlerOptions;
  /**
   * UDP response-rate limiting; absent or rate 0 = off. Clients with a valid server cookie are exempt.
   * Its signing rates bound fresh DNSSEC signatures per zone and client network (UDP and TCP alike).
   */
  rateLimit?: RateLimitOptions;
  /** DNS Cookies secret (16 bytes); absent = cookies ignored. */
  cookieSecret?: Buffer;
  /**
   * Several worker processes on one port (SO_REUSEPORT; the kernel spreads clients among them):
   * 'claim' binds the port exclusively first, so a port another process holds is refused as it
   * is without workers, then binds it shared; 'join' binds shared to the port a claimer holds.
   */
  reusePort?: 'claim' | 'join';
  /** Zone transfers to the operator's secondaries, TSIG, NOTIFY (./transfer); absent: everyone REFUSED. */
  transfers?: TransferSettings;
  log: Logger;
}

export class DnsServer {
  readonly index: ZoneIndex;
  readonly metrics = new DnsMetrics();
  readonly handler: QueryHandler;
  readonly rateLimiter: ResponseRateLimiter | undefined;
  readonly transfers: Transfers | undefined;
  private udp: UdpListener | undefined;
  private tcp: TcpListener | undefined;

  constructor(private readonly options: DnsServerOptions) {
    this.index = new ZoneIndex({ nameservers: options.nameservers, hostmaster: options.hostmaster });
    this.transfers = options.transfers && new Transfers(options.transfers, this.index, () => this.metrics.revisionApplied(), options.log);
    const limit = options.rateLimit;
    this.rateLimiter = limit && limit.rate > 0 ? new ResponseRateLimiter(limit) : undefined;
    const signing = limit && (limit.signZoneRate || limit.signClientRate) ? new SigningBudget({ zoneRate: limit.signZoneRate ?? 0, clientRate: limit.signClientRate ?? 0 }) : undefined;
    let lastLogged = 0;
    this.handler = new QueryHandler(this.index, this.metrics, {
      ...options.handler,
      transfers: this.transfers?.responder,
      rateLimiter: this.rateLimiter,
      signingBudget: signing,
      cookies: options.cookieSecret && new ServerCookies(options.cookieSecret),
      // At most one line a second: a packet that trips a bug may arrive by the thousand.
      onError: (error) => {
        if (Date.now() - lastLogged < 1000) return;
        lastLogged = Date.now();
        options.log.error({ err: error }, 'dns: internal error answering a query (answered SERVFAIL)');
      },
    });
    this.metrics.zonesServed = () => this.index.size;
    const transfers = this.transfers;
    if (transfers) {
      this.metrics.transfers = () => {
        const c = transfers.responder.counters;
        const n = transfers.notifier;
        const j = transfers.journal;
        return {
          axfr: c.axfr,
          ixfr: c.ixfr,
          ixfrFull: c.ixfrFull,
          refused: c.refused,
          tsigFailures: c.tsigFailures,
          notifySent: n?.sent ?? 0,
          notifyAnswered: n?.answered ?? 0,
          notifyWaiting: n?.waiting ?? 0,
          journalBytes: j.bytes,
          journalEntries: j.entries,
          journalEvicted: j.evicted,
          transfersRunning: transfers.slots.running,
          transfersWaiting: transfers.slots.waiting,
          transfersQueued: transfers.slots.queued,
        };
      };
    }
    this.metrics.deferredRebuilds = () => this.index.deferredRebuilds;
    this.metrics.rateLimited = () => this.rateLimiter?.limited ?? 0;
  }

  /** Binds UDP and TCP; returns the port. `port`: instead of the one in the options. */
  async listen(wanted = this.options.port): Promise<number> {
    const mode = this.options.reusePort;
    if (mode !== 'claim') return this.bind(wanted, mode === 'join');
    for (let attempt = 0; ; attempt++) {
      const port = await this.bind(wanted, false);
      await this.close();
      try {
        return await this.bind(port, true);
      } catch (error) {
        // Port 0: another process took the free port in between; pick another.
        if (wanted !== 0 || attempt >= 5 || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      }
    }
  }

  private async bind(wanted: number, reusePort: boolean): Promise<number> {
    const { host, log } = this.options;
    const family = isIPv6(host) ? 6 : 4;
    for (let attempt = 0; attempt < 20; attempt++) {
      const udp = UdpListener.create(this.handler, family, log, reusePort);
      // dns2's listen() only resolves; a failed bind arrives as an 'error' event.
      await new Promise<void>((resolve, reject) => {
        const failed = (error: Error) => {
          udp.close();
          reject(error);
        };
        udp.once('error', failed);
        void udp.listen(wanted, host).then(() => {
          udp.off('error', failed);
          resolve();
        });
      });
      const port = udp.address().port;
      const tcp = TcpListener.create(this.handler, this.metrics, this.options.tcp, log);
      const bound = await new Promise<boolean>((resolve, reject) => {
        tcp.once('error', (error: NodeJS.ErrnoException) => {
          if (error.code === 'EADDRINUSE' && wanted === 0) return resolve(false);
          udp.close();
          reject(error);
        });
        tcp.listen({ port, host, backlog: TCP_BACKLOG, ...(reusePort && { reusePort: true }) }, () => resolve(true));
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

  /** Stops watching the secondaries and sending NOTIFY (close() only unbinds: listen() rebinds through it). */
  stopTransfers(): void {
    this.transfers?.close();
  }

  async close(): Promise<void> {
    const { udp, tcp } = this;
    this.udp = undefined;
    this.tcp = undefined;
    await tcp?.shutdown();
    await new Promise<void>((resolve) => (udp ? udp.close(() => resolve()) : resolve()));
  }
}
