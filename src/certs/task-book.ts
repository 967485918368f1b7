// Where certificate tasks are kept: one per domain at a time, under the owner (so a listing of a
// customer's tasks reads only theirs), with an index by id (the detail view) and a due list of
// the active ones (what the worker looks at, whatever the number of finished tasks).
//   task     "OWNER/DOMAIN" → the domain's latest task
//   taskid   "ID" → "OWNER/DOMAIN"
//   taskdue  "DOMAIN" → "OWNER/DOMAIN" while queued or running
import { randomBytes } from 'node:crypto';
import type { DomainState } from '../model/domain.ts';
import { CANCELLED, isActive, taskShown, type TaskFilter, type TaskReason, type TaskState } from '../model/task.ts';
import type { Page, PageRequest, Store } from '../store/types.ts';
import { certificateNames } from './cert-names.ts';

const keyOf = (ownerId: number, domain: string) => `${ownerId}/${domain}`;

export class TaskBook {
  private readonly listeners = new Set<(domain: string, task: TaskState | undefined) => void>();

  /**
   * `minGapMs`: the least time between two attempts for one domain, however often it is asked
   * for (an explicit request, ssl turned off and on): every attempt may be an order at the CA,
   * whose limits the service's one account shares among all customers.
   */
  constructor(
    private readonly store: Store,
    private readonly minGapMs = 60_000,
  ) {}

  /** Now, or when the gap after `lastAttempt` ends. */
  private notBefore(lastAttempt: string | null, now: number): string | null {
    if (lastAttempt === null) return null;
    const at = Date.parse(lastAttempt) + this.minGapMs;
    return at > now ? new Date(at).toISOString() : null;
  }

  /**
   * Called after every task this process writes (undefined once a domain's tasks are gone): the
   * worker keeps its list of active tasks from these, and reads the store's list only now and then
   * (for tasks other processes write).
   */
  onChange(listener: (domain: string, task: TaskState | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Wants a certificate for the domain: the active task when there is one (a queued one takes the
   * domain's current names and runs now), else a new queued task.
   */
  async request(domain: DomainState, reason: TaskReason): Promise<TaskState> {
    const now = new Date().toISOString();
    const current = await this.forDomain(domain.ownerId, domain.domain);
    const names = certificateNames(domain);
    const lastAttempt = current?.lastAttempt ?? null;
    if (current && isActive(current)) {
      if (current.status === 'queued') {
        // Asked again while waiting for a retry: go now (or once the gap since the last
        // attempt is over), for the names the domain has now.
        await this.save({ ...current, names, nextAttempt: this.notBefore(lastAttempt, Date.now()), updated: now });
      }
      return (await this.forDomain(domain.ownerId, domain.domain)) ?? current;
    }
    const task: TaskState = {
      id: `tk_${randomBytes(9).toString('base64url')}`,
      ownerId: domain.ownerId,
      domain: domain.domain,
      names,
      reason,
      status: 'queued',
      challenge: null,
      attempts: 0,
      orders: 0,
      nextAttempt: this.notBefore(lastAttempt, Date.now()),
      lastAttempt,
      error: null,
      problems: [],
      certificate: null,
      created: now,
      updated: now,
    };
    await this.store.putDoc('taskid', task.id, keyOf(task.ownerId, task.domain));
    await this.save(task);
    if (current) await this.store.deleteDoc('taskid', current.id);
    return task;
  }

  /**
   * Nothing is wanted any more (ssl off) or nothing can be ordered yet (a claim not proven): a
   * waiting task ends with `why`, and a failed one takes `why` as its last word (so one closed by
   * ssl going off leaves the open list). A running one finishes, and nothing renews it.
   */
  async cancel(domain: DomainState, why: string): Promise<void> {
    const current = await this.forDomain(domain.ownerId, domain.domain);
    if (current?.status === 'queued' || (current?.status === 'failed' && current.error !== why && !(current.error ?? '').startsWith(CANCELLED))) {
      await this.save({ ...current, status: 'failed', nextAttempt: null, error: why, updated: new Date().toISOString() });
    }
  }

  /** Writes a task, keeping the due list in step with its status. */
  async save(task: TaskState): Promise<void> {
    const key = keyOf(task.ownerId, task.domain);
    await this.store.putDoc('task', key, task);
    if (isActive(task)) await this.store.putDoc('taskdue', task.domain, key);
    else await this.store.deleteDoc('taskdue', task.domain);
    this.emit(task.domain, task);
  }

  /** The domain is gone: so are its tasks. */
  async forget(ownerId: number, domain: string): Promise<void> {
    const current = await this.forDomain(ownerId, domain);
    if (current) await this.store.deleteDoc('taskid', current.id);
    await this.store.deleteDoc('task', keyOf(ownerId, domain));
    await this.store.deleteDoc('taskdue', domain);
    this.emit(domain, undefined);
  }

  forDomain(ownerId: number, domain: string): Promise<TaskState | undefined> {
    return this.store.getDoc<TaskState>('task', keyOf(ownerId, domain));
  }

  /** A task by id, only when `ownerId` owns it (another customer's id reads as missing). */
  async get(ownerId: number, id: string): Promise<TaskState | undefined> {
    const key = await this.store.getDoc<string>('taskid', id);
    if (!key?.startsWith(`${ownerId}/`)) return undefined;
    const task = await this.store.getDoc<TaskState>('task', key);
    return task?.id === id ? task : undefined;
  }

  /** The owner's tasks in domain order, those the filter shows (see `taskShown`). */
  async list(ownerId: number, page: PageRequest, filter: TaskFilter): Promise<Page<TaskState>> {
    // Filtering can leave a page short of `limit`; the next cursor still moves on.
    const docs = await this.store.listDocs<TaskState>('task', page, `${ownerId}/`);
    return { items: docs.items.map((d) => d.value).filter((t) => taskShown(t, filter)), next: docs.next };
  }

  /** Every active task (queued or running), for the worker. */
  async active(): Promise<TaskState[]> {
    const out: TaskState[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.store.listDocs<string>('taskdue', { limit: 500, cursor });
      const tasks = await Promise.all(page.items.map((d) => this.store.getDoc<TaskState>('task', d.value)));
      for (const [i, t] of tasks.entries()) {
        if (t && isActive(t)) out.push(t);
        else await this.store.deleteDoc('taskdue', page.items[i]!.id);
      }
      cursor = page.next;
    } while (cursor);
    return out;
  }

  private emit(domain: string, task: TaskState | undefined): void {
    for (const l of this.listeners) l(domain, task);
  }
}
