// The thread of the embedded store's large commits (see off-thread.ts): the same environment
// opened again here (lmdb-js shares it between the threads of a process), change sets applied
// with the same code as in the main thread, so a 20,000-record commit holds this thread only.
import { parentPort, workerData } from 'node:worker_threads';
import { StoreError } from '../errors.ts';
import type { RecordChangeSet } from '../types.ts';
import { LmdbCore, type EmbeddedStoreOptions } from './core.ts';
import { LmdbZones } from './zones.ts';

export interface CommitRequest {
  id: number;
  name: string;
  ownerId: number;
  /** The change set as JSON text (written in slices by the main thread). */
  change: string;
}

export type CommitAnswer =
  | { id: number; result: Awaited<ReturnType<LmdbZones['applyRecordChangeSet']>> }
  | { id: number; error: { code?: StoreError['code']; message: string; errors?: StoreError['errors']; retryAfter?: number } };

const core = new LmdbCore(workerData as EmbeddedStoreOptions);
const zones = new LmdbZones(core);
const port = parentPort!;

port.on('message', (request: CommitRequest) => {
  void (async (): Promise<CommitAnswer> => {
    try {
      return { id: request.id, result: await zones.applyRecordChangeSet(request.name, request.ownerId, JSON.parse(request.change) as RecordChangeSet) };
    } catch (error) {
      if (error instanceof StoreError) return { id: request.id, error: { code: error.code, message: error.message, errors: error.errors, retryAfter: error.retryAfter } };
      return { id: request.id, error: { message: (error as Error)?.message ?? String(error) } };
    }
  })().then((answer) => port.postMessage(answer));
});
