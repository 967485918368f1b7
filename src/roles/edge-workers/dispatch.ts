// Which worker a client connection goes to (PALISADE_EDGE_WORKER_BALANCE=client): the one its
// client network hashes to — the /32 or /64 the connection limits count by, so everything kept per
// client (rate and ban, connections, backend share) lives in one worker and holds exactly as in
// one process. A worker that is not serving (restarting) passes its clients to the next one that
// is. A trusted proxy (a load balancer in front) carries many clients: its connections go round
// the workers in turn.
import { clientNetwork } from '../../model/client-network.ts';
import type { IpRanges } from '../../edge/protect/ip-ranges.ts';

/** FNV-1a, 32 bits: cheap, and spreads networks that differ in one byte. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class ConnectionDispatch {
  private turn = 0;

  constructor(
    private readonly count: number,
    private readonly trusted: IpRanges,
    private readonly prefixV4: number,
    private readonly prefixV6: number,
  ) {}

  /** The worker for a connection from `address`; undefined when none is serving. */
  pick(address: string, serving: (index: number) => boolean): number | undefined {
    const start = this.trusted.size > 0 && this.trusted.has(address) ? this.turn++ % this.count : this.home(address);
    for (let i = 0; i < this.count; i++) {
      const index = (start + i) % this.count;
      if (serving(index)) return index;
    }
    return undefined;
  }

  /** The worker a client's connections go to while it serves. */
  home(address: string): number {
    return hash(clientNetwork(address, this.prefixV4, this.prefixV6)) % this.count;
  }
}
