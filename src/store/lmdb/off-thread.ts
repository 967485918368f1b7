// Large change sets (a zone-file import, a bulk change of thousands of records) are committed in a
// thread of their own (commit-worker.ts): the one LMDB transaction of 20,000 records takes a
// quarter to half a second of CPU, which in the main thread would hold every other account's
// requests up that long. The main thread only writes the set as JSON text, in slices. The thread
// starts on the first large set and holds the process open only while a commit is under way.
import { Worker } from 'node:worker_threads';
import { jsonArrayInSlices, TimeSlices } from '../../common/time-slices.ts';
import { StoreError } from '../errors.ts';
import type { RecordChangeSet, ZoneHead } from '../types.ts';
import type { CommitAnswer, CommitRequest } from './commit-worker.ts';
import type { EmbeddedStoreOptions } from './core.ts';

type Result = { head: ZoneHead; ids: number[] } | 'moved';

export class OffThreadCommits {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, { resolve: (r: Result) => void; reject: (e: unknown) => void }>();
  private next = 0;

  constructor(private readonly options: EmbeddedStoreOptions) {}

  async apply(name: string, ownerId: number, change: RecordChangeSet): Promise<Result> {
    const slices = new TimeSlices();
    const text = `{"revision":${change.revision},"create":${await jsonArrayInSlices(change.create, slices)},"put":${await jsonArrayInSlices(change.put, slices)},"del":${JSON.stringify(change.del)}}`;
    const worker = this.worker ?? this.start();
    const id = ++this.next;
    const answer = new Promise<Result>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    worker.ref();
    worker.postMessage({ id, name, ownerId, change: text } satisfies CommitRequest);
    return answer;
  }

  private start(): Worker {
    // Run from the sources (tests, tsx) the thread loads the TypeScript file through tsx too.
    const fromSource = import.meta.url.endsWith('.ts');
    const worker = new Worker(new URL(`./commit-worker.${fromSource ? 'ts' : 'js'}`, import.meta.url), {
      workerData: this.options,
      execArgv: fromSource ? ['--import', 'tsx'] : [],
    });
    worker.on('message', (answer: CommitAnswer) => {
      const waiter = this.waiting.get(answer.id);
      if (!waiter) return;
      this.waiting.delete(answer.id);
      if (this.waiting.size === 0) worker.unref();
      if ('result' in answer) return waiter.resolve(answer.result);
      const { code, message, errors, retryAfter } = answer.error;
      const error = new StoreError(code ?? 'STORE_UNAVAILABLE', message, errors);
      if (retryAfter !== undefined) error.retryAfter = retryAfter;
      waiter.reject(error);
    });
    const fail = (why: string) => {
      if (this.worker === worker) this.worker = undefined;
      // A thread that ended mid-commit committed all or nothing; the caller is told it is unknown which.
      for (const waiter of this.waiting.values()) waiter.reject(new StoreError('STORE_UNAVAILABLE', `the store's commit thread ended (${why}); read the zone before trying again`));
      this.waiting.clear();
    };
    worker.on('error', (error) => fail(error.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}
