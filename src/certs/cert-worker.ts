// Runs certificate tasks beside the API: exactly one process at a time (a lease in the store),
// a few domains at once, each failure retried with exponential backoff and jitter up to the
// configured attempts, and every domain looked at for renewal at an interval. Tasks live in the
// store, so a restart (or another API process taking the lease) carries on where this one stopped.
import type { Logger } from 'pino';
import type { CertConfig } from '../config.ts';
import { ApiError } from '../errors.ts';
import { certificateFromPem } from '../model/certificate.ts';
import { isProven, type DomainState } from '../model/domain.ts';
import { isActive, type NameProblem, type TaskState } from '../model/task.ts';
import type { Store } from '../store/types.ts';
import { coalesced } from '../common/coalesce.ts';
import { AcmeAccount } from './acme-account.ts';
import { IssueError, orderCertificate, type ChallengePublisher } from './acme-order.ts';
import { certificateNames, issuanceReason, MAX_CERTIFICATE_NAMES } from './cert-names.ts';
import { Dns01Publisher, Http01Publisher } from './challenges.ts';
import { isDue, OrderBudget, pickRuns } from './fair-share.ts';
import { challengeFor, judgeHttp01, resolveAddresses, servingNodes } from './preflight.ts';
import { caaProblems } from './caa-check.ts';
import type { SecretBox } from './secret-box.ts';
import type { TaskBook } from './task-book.ts';
import type { EventSink } from '../model/event.ts';
import { retryDelay } from '../common/retry-delay.ts';
import { LeaseHolder } from '../store/lease-holder.ts';
import type { MetricsSnapshot } from '../common/metrics/family.ts';
import { certMetrics } from './cert-families.ts';
import { StoreError } from '../store/errors.ts';

const TICK_MS = 1000;
/** The store's list of active tasks is read this often (tasks written by other processes); this process's own writes are followed as they happen. */
const RESCAN_MS = 5000;
/** Domains issued at once, and at most this many of one account's (the others' tasks are not held up by one account's thousands). */
export const CONCURRENCY = 8;
const PER_OWNER = 4;

/** A failure no retry can mend (configuration): the task fails at once. */
class FinalError extends IssueError {}

export interface CertWorkerOptions {
  store: Store;
  book: TaskBook;
  config: CertConfig;
  box: SecretBox | undefined;
  log: Logger;
  /** Our name servers (address:port), where a DNS-01 TXT must be seen before the CA is told (found when first needed). */
  nameservers: () => Promise<string[]>;
  /** The port edges answer plain HTTP on, as the CA reaches them. */
  httpPort: number;
  /** Where a task failed for good is told to its owner (the `certificate.failed` event). */
  events?: EventSink;
}

/** The delay before attempt n+1 (see ../retry-delay.ts). */
export { retryDelay };

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN']);

export class CertWorker {
  /** Runs in progress by domain. */
  private readonly running = new Map<string, { ownerId: number; done: Promise<void> }>();
  private readonly orders: OrderBudget;
  private readonly account: AcmeAccount | undefined;
  private timer: NodeJS.Timeout | undefined;
  private unwake: (() => void) | undefined;
  private lastReconcile = 0;
  private stopped = false;
  /** Active tasks by domain, as last read or written here (run() re-reads each before running it). */
  private due = new Map<string, TaskState>();
  private dueReadAt = 0;
  /** Counters for /metrics: attempts by outcome, orders placed, and failures by problem type. */
  private readonly counts = { issued: 0, failed: 0, orders: 0, leader: 0 };
  private readonly failures = new Map<string, number>();

  private readonly lease: LeaseHolder;

  constructor(private readonly options: CertWorkerOptions) {
    this.lease = new LeaseHolder(options.store, 'certificates');
    const { config, box, store } = options;
    this.account = config.directoryUrl && box ? new AcmeAccount(store, { ...config, directoryUrl: config.directoryUrl }, box) : undefined;
    this.orders = new OrderBudget(config.ordersPerUserHour);
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
    this.unwake = this.options.book.onChange((domain, task) => {
      this.remember(domain, task);
      if (task?.status === 'queued') void this.tick();
    });
    void this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.unwake?.();
    await this.tick.settled();
    // A shutdown does not wait out a CA: a task still running is taken up again by the next
    // holder of the lease (a new order; the CA reuses the validations already done).
    await Promise.race([Promise.allSettled([...this.running.values()].map((r) => r.done)), new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
    // Handing the lease back lets the next process (a restart) carry on at once, not after it expires.
    await this.lease.release();
  }

  private readonly tick = coalesced(async () => {
    if (this.stopped) return;
    const { book, log, config } = this.options;
    try {
      this.counts.leader = (await this.lease.hold()) ? 1 : 0;
      if (!this.counts.leader) return;
      const now = Date.now();
      if (now - this.lastReconcile >= config.renewCheckMs) {
        this.lastReconcile = now;
        await this.reconcile();
      }
      if (now - this.dueReadAt >= RESCAN_MS) {
        this.dueReadAt = now;
        this.due = new Map((await book.active()).map((t) => [t.domain, t]));
      }
      const runningOwners = [...this.running.values()].map((r) => r.ownerId);
      for (const task of pickRuns([...this.due.values()], new Set(this.running.keys()), runningOwners, now, CONCURRENCY - this.running.size, PER_OWNER, config.retryBaseMs)) {
        const run = this.run(task)
          .catch((error: unknown) => log.error({ err: error, domain: task.domain }, 'certificates: a task could not be recorded'))
          .finally(() => {
            this.running.delete(task.domain);
            if (!this.stopped) void this.tick();
          });
        this.running.set(task.domain, { ownerId: task.ownerId, done: run });
      }
    } catch (error) {
      log.warn({ err: error }, 'certificates: the task list could not be read; trying again');
    }
  });

  private remember(domain: string, task: TaskState | undefined): void {
    if (task && isActive(task)) this.due.set(domain, task);
    else this.due.delete(domain);
  }

  /** What this process's worker did (families in cert-families.ts). */
  metrics(): MetricsSnapshot {
    return certMetrics(this.counts, this.failures);
  }

  /** Every domain with ssl on: a task where a certificate is missing, no longer covers its names, or is due for renewal. */
  private async reconcile(): Promise<void> {
    const { store } = this.options;
    let cursor: string | undefined;
    do {
      const page = await store.listAllZones({ limit: 500, cursor });
      for (const { domain } of page.items) if (domain.ssl && isProven(domain)) await this.reconcileOne(domain);
      cursor = page.next;
      await new Promise((resolve) => setImmediate(resolve));
    } while (cursor);
  }

  private async reconcileOne(domain: DomainState): Promise<void> {
    const reason = issuanceReason(domain, await this.options.store.getCertificate(domain.domain), Date.now());
    if (!reason) return;
    const current = await this.options.book.forDomain(domain.ownerId, domain.domain);
    if (current && (current.status === 'queued' || current.status === 'running')) return;
    // A task that failed for good for these very names is not retried by the clock: the
    // customer asks again (or changes something) once the cause is mended.
    // A renewal that failed for good is tried again a day later (the certificate still runs).
    const failedForGood = current?.status === 'failed' && current.names.join() === certificateNames(domain).join();
    if (failedForGood && (reason !== 'renewal' || Date.now() - Date.parse(current.updated) < 24 * 3600_000)) return;
    await this.options.book.request(domain, reason);
  }

  /** One attempt at a task: checked against the store first, then ordered, then the outcome kept. */
  private async run(listed: TaskState): Promise<void> {
    const ready = await this.readyToRun(listed);
    if (!ready) return;
    const { queued, domain } = ready;
    const names = certificateNames(domain);
    const now = new Date().toISOString();
    const running: TaskState = { ...queued, names, status: 'running', challenge: challengeFor(domain), attempts: queued.attempts + 1, nextAttempt: null, lastAttempt: now, error: null, problems: [], updated: now };
    const held = { task: running };
    await this.options.book.save(held.task);
    try {
      await this.issue(held, domain, names);
    } catch (error) {
      await this.failed(held.task, domain, names, error);
      return;
    }
    // The domain may have changed while it ran (names, mask): look again.
    const after = await this.options.store.getZoneHead(domain.domain);
    if (after) await this.reconcileOne(after.domain);
  }

  /** The task as the store has it now, and its domain, when it is to run now; else its state kept, and undefined. */
  private async readyToRun(listed: TaskState): Promise<{ queued: TaskState; domain: DomainState } | undefined> {
    const { store, book, config } = this.options;
    // The list was read before: the task may have finished since (a run that ended while the
    // list was read). Only what the store says now is run, so no attempt (no order) is doubled.
    const queued = await book.forDomain(listed.ownerId, listed.domain);
    if (!queued || queued.id !== listed.id || !isDue(queued, Date.now(), config.retryBaseMs)) {
      // What the list held was stale: keep what the store says instead, so it is not picked again.
      this.remember(listed.domain, queued);
      return undefined;
    }
    const zone = await store.getZoneHead(queued.domain);
    if (!zone || zone.domain.ownerId !== queued.ownerId) {
      await book.forget(queued.ownerId, queued.domain);
      return undefined;
    }
    const domain = zone.domain;
    const now = () => new Date().toISOString();
    if (!domain.ssl) {
      await book.save({ ...queued, status: 'failed', nextAttempt: null, error: 'cancelled: ssl is off for the domain', updated: now() });
      return undefined;
    }
    if (!isProven(domain)) {
      // A claim not proven (issue 26): neither challenge may be answered for it; its proof asks again.
      await book.save({ ...queued, status: 'failed', nextAttempt: null, error: 'not ordered: the domain\'s ownership is not proven (no DNS-01 or HTTP-01 for a pending claim)', problems: [{ name: domain.domain, type: 'palisade:unproven', detail: 'the domain\'s ownership is not proven' }], updated: now() });
      return undefined;
    }
    const budget = this.orders.waitFor(queued.ownerId, Date.now());
    if (budget > 0) {
      // This account placed its hour's orders: the task waits, saying so (no attempt counted).
      const error = `waiting: this account placed ${config.ordersPerUserHour} certificate orders in the last hour, the most the service allows one account`;
      await book.save({ ...queued, status: 'queued', nextAttempt: new Date(Date.now() + budget).toISOString(), error, problems: [], updated: now() });
      return undefined;
    }
    return { queued, domain };
  }

  /** Orders and stores the certificate; `held.task` follows every save (the failure is told from the latest). */
  private async issue(held: { task: TaskState }, domain: DomainState, names: string[]): Promise<void> {
    const { store, book, config, box, log } = this.options;
    const now = () => new Date().toISOString();
    const started = Date.now();
    if (names.length > MAX_CERTIFICATE_NAMES) {
      const detail = `the domain and its mask name ${names.length} names; a certificate holds at most ${MAX_CERTIFICATE_NAMES} (use "*" in the mask for a wildcard)`;
      throw new FinalError(`not ordered: ${detail}`, [{ name: domain.domain, type: 'palisade:too-many-names', detail }]);
    }
    if (!config.directoryUrl) throw new FinalError('no ACME CA is configured (PALISADE_ACME_DIRECTORY is unset): certificates cannot be issued', names.map((name) => ({ name, type: 'palisade:no-ca', detail: 'no ACME CA is configured' })));
    if (!box || !this.account) throw new FinalError('PALISADE_SECRET_KEY is not set: private keys cannot be stored', names.map((name) => ({ name, type: 'palisade:no-secret-key', detail: 'private keys cannot be stored sealed' })));
    if (held.task.challenge === 'dns-01' && config.caaIdentity) {
      // Our name servers answer the CA's CAA lookups: read the same records from the store.
      const problems = await caaProblems(domain.domain, names, config.caaIdentity, (owner) => store.getRecordsAt(domain.domain, owner));
      if (problems.length > 0) throw new IssueError(`not ordered: CAA forbids our CA: ${problems.map((p) => p.detail).join('; ')}`, problems);
    }
    const publisher = await this.publisher(domain, names, held.task.challenge!);
    const client = await this.account.get();
    const issued = await orderCertificate(client, names, publisher, async () => {
      this.orders.count(held.task.ownerId, Date.now());
      this.counts.orders++;
      held.task = { ...held.task, orders: held.task.orders + 1, updated: now() };
      await book.save(held.task);
    });
    const cert = certificateFromPem(domain.domain, issued.pem, issued.key);
    await store.putCertificate({ ...cert, key: box.seal(cert.key) });
    const task = (held.task = { ...held.task, status: 'done', error: null, problems: [], certificate: { fingerprint: cert.fingerprint, notBefore: cert.notBefore, notAfter: cert.notAfter }, updated: now() });
    await book.save(task);
    this.counts.issued++;
    log.info({ domain: domain.domain, names, challenge: task.challenge, attempts: task.attempts, orders: task.orders, ms: Date.now() - started, notAfter: cert.notAfter }, 'certificates: issued');
  }

  /** A failed attempt: queued again after a backoff, or failed for good (told to the owner). */
  private async failed(running: TaskState, domain: DomainState, names: string[], error: unknown): Promise<void> {
    const { book, config, log } = this.options;
    const final = error instanceof FinalError || running.attempts >= config.maxAttempts;
    const message = this.describe(error);
    const problems: NameProblem[] = error instanceof IssueError ? error.problems : [];
    const task: TaskState = {
      ...running,
      status: final ? 'failed' : 'queued',
      nextAttempt: final ? null : new Date(Date.now() + retryDelay(config.retryBaseMs, running.attempts)).toISOString(),
      error: message,
      problems,
      updated: new Date().toISOString(),
    };
    await book.save(task);
    this.counts.failed++;
    for (const type of new Set(problems.length > 0 ? problems.map((p) => p.type) : ['palisade:other'])) this.failures.set(type, (this.failures.get(type) ?? 0) + 1);
    log.warn({ domain: domain.domain, attempts: task.attempts, orders: task.orders, final, error: message }, 'certificates: issuance failed');
    if (final) {
      await this.options.events
        ?.emit(task.ownerId, 'certificate.failed', domain.domain, { task: task.id, names, attempts: task.attempts, error: message, problems })
        .catch((e: unknown) => log.warn({ err: (e as Error).message, domain: domain.domain }, 'certificates: the failure could not be told to the customer'));
    }
  }

  private async publisher(domain: DomainState, names: string[], kind: 'dns-01' | 'http-01'): Promise<ChallengePublisher> {
    const { store, config, nameservers, httpPort } = this.options;
    if (kind === 'dns-01') {
      const servers = await nameservers();
      if (servers.length === 0) throw new IssueError('no name server to confirm the DNS-01 TXT on: set PALISADE_ACME_CHECK_NAMESERVERS', names.map((name) => ({ name, type: 'palisade:no-nameserver', detail: 'our name servers could not be found' })));
      return new Dns01Publisher(store, domain, servers, config.challengeTimeoutMs);
    }
    const nodes = await store.listNodes();
    const problems = judgeHttp01(domain, names, nodes, await resolveAddresses(names, config.resolver));
    if (problems.length > 0) throw new IssueError(`not ordered: ${problems.map((p) => p.detail).join('; ')}`, problems);
    return new Http01Publisher(store, domain, servingNodes(domain, nodes), httpPort, config.challengeTimeoutMs);
  }

  private describe(error: unknown): string {
    if (error instanceof IssueError) return error.message;
    if (error instanceof StoreError || error instanceof ApiError) return `the store failed: ${error.message}`;
    const code = (error as { code?: string }).code;
    const message = (error as Error)?.message ?? String(error);
    if (code && NETWORK_CODES.has(code)) return `the CA (${this.options.config.directoryUrl}) could not be reached: ${message}`;
    // acme-client's way of reporting a connection lost in the middle of an order.
    if (error instanceof TypeError && message.includes("reading 'config'")) return `the CA (${this.options.config.directoryUrl}) could not be reached (the connection failed during the order)`;
    return `the CA refused: ${message}`;
  }
}
