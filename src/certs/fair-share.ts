// Sharing the certificate work between accounts: which due tasks run next (round-robin across
// accounts, a few at most per account), and how many ACME orders one account may take per hour.
// The CA's limits (Let's Encrypt: 300 new orders per 3 hours per account) belong to the
// service's one ACME account, so one customer's thousands of domains must not use them all. Pure.
import type { TaskState } from '../model/task.ts';

/** Whether an active task may start now (see pickRuns). */
export function isDue(task: TaskState, now: number, minGapMs: number): boolean {
  if (task.status === 'queued') return task.nextAttempt === null || Date.parse(task.nextAttempt) <= now;
  if (task.status === 'running') return task.lastAttempt === null || Date.parse(task.lastAttempt) + minGapMs <= now;
  return false;
}

/**
 * Up to `slots` tasks to start now: due (queued with no `nextAttempt` or one past; or marked
 * running but not running here — left by a process that stopped, or by a run whose outcome the
 * store could not record — once `minGapMs` has passed since that attempt began, so a failing
 * store does not turn into an order every few seconds), taken in turn from each account with
 * fewer than `perOwner` runs (counting `runningOwners`, one entry per run in progress).
 */
export function pickRuns(active: readonly TaskState[], running: ReadonlySet<string>, runningOwners: readonly number[], now: number, slots: number, perOwner: number, minGapMs = 0): TaskState[] {
  const byOwner = new Map<number, TaskState[]>();
  for (const task of active) {
    if (running.has(task.domain) || !isDue(task, now, minGapMs)) continue;
    const queue = byOwner.get(task.ownerId);
    if (queue) queue.push(task);
    else byOwner.set(task.ownerId, [task]);
  }
  const busy = new Map<number, number>();
  for (const owner of runningOwners) busy.set(owner, (busy.get(owner) ?? 0) + 1);
  const picked: TaskState[] = [];
  let progress = true;
  while (picked.length < slots && progress) {
    progress = false;
    for (const [owner, queue] of byOwner) {
      if (picked.length >= slots) break;
      if ((busy.get(owner) ?? 0) >= perOwner || queue.length === 0) continue;
      picked.push(queue.shift()!);
      busy.set(owner, (busy.get(owner) ?? 0) + 1);
      progress = true;
    }
  }
  return picked;
}

const HOUR = 3600_000;

/** Orders per account in a sliding hour (kept by the process holding the work's lease). */
export class OrderBudget {
  private readonly placed = new Map<number, number[]>();

  constructor(private readonly perHour: number) {}

  count(ownerId: number, now: number): void {
    const list = this.recent(ownerId, now);
    list.push(now);
    this.placed.set(ownerId, list);
  }

  /** 0 when the account may order now, else how long until it may. */
  waitFor(ownerId: number, now: number): number {
    const list = this.recent(ownerId, now);
    return list.length < this.perHour ? 0 : list[list.length - this.perHour]! + HOUR - now;
  }

  private recent(ownerId: number, now: number): number[] {
    const list = (this.placed.get(ownerId) ?? []).filter((t) => t > now - HOUR);
    if (list.length === 0) this.placed.delete(ownerId);
    else this.placed.set(ownerId, list);
    return list;
  }
}
