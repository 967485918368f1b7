// The primary's side of balancing by client: each accepted connection goes to the worker its
// client network hashes to (dispatch.ts). Node passes one handle at a time per worker (the next
// once the worker has acknowledged the last) and keeps the queued ones; a worker that dies leaves
// them open and unanswered. So this keeps its own copy until the handle is on its way (then
// closes its copy: the connection lives on in the worker), and gives those still queued to
// another worker. While no worker serves (the start, or every one restarting), connections wait
// here, bounded.
import type { Socket } from 'node:net';
import type { ConnectionDispatch } from './dispatch.ts';
import type { Scheme } from './messages.ts';
import type { WorkerPool, WorkerSlot } from './worker-pool.ts';

/** Connections held while no worker serves (beyond: closed). */
const MAX_PARKED = 4096;

export class ConnectionHandover {
  private readonly queued: Map<number, Map<Socket, Scheme>>;
  private readonly parked: Array<[Socket, Scheme]> = [];

  constructor(
    private readonly pool: WorkerPool,
    private readonly dispatch: ConnectionDispatch,
  ) {
    this.queued = new Map(pool.slots.map((s) => [s.index, new Map()]));
  }

  /** A connection accepted on a port of `scheme` (paused: the worker reads it). */
  accept(socket: Socket, scheme: Scheme): void {
    socket.on('error', () => socket.destroy());
    this.handOver(socket, scheme);
  }

  private handOver(socket: Socket, scheme: Scheme): void {
    const address = socket.remoteAddress;
    if (address === undefined) return void socket.destroy();
    const index = this.dispatch.pick(address, (i) => this.pool.slots[i]!.ready);
    if (index === undefined) {
      if (this.parked.length >= MAX_PARKED) return void socket.destroy();
      this.parked.push([socket, scheme]);
      return;
    }
    const waiting = this.queued.get(index)!;
    waiting.set(socket, scheme);
    this.pool.send(this.pool.slots[index]!, { t: 'connection', scheme }, socket, () => {
      waiting.delete(socket);
      socket.destroy();
    });
  }

  /** A worker serves (again): the connections waiting for one go now. */
  handOverParked(): void {
    for (const [socket, scheme] of this.parked.splice(0)) if (!socket.destroyed) this.handOver(socket, scheme);
  }

  /** A worker stopped: the connections it never took go to another. */
  handOverQueued(slot: WorkerSlot): void {
    const waiting = this.queued.get(slot.index)!;
    const again = [...waiting];
    waiting.clear();
    for (const [socket, scheme] of again) if (!socket.destroyed) this.handOver(socket, scheme);
  }
}
