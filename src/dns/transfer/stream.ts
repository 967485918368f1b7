// A zone transfer's answer, made a message at a time. Building all of a 20,000-record zone's
// messages at once held the event loop for 36–53 ms (20 at once: up to 370 ms), during which no
// other query was answered; the TCP listener now asks for one message at a time, in its slices,
// between which other queries are answered. The zone's data is taken when the request arrives
// (a consistent snapshot: changes patch the served zone's name map in place), and every message
// is signed as it is made, each with the MAC before it (RFC 8945 §5.3.1). At most a few run per
// secondary at once (slots.ts): `start` waits for a slot.
import type { TransferSlots } from './slots.ts';
import { sign, type TsigKey } from './tsig.ts';

export class TransferStream {
  private index = 0;
  private mac: Buffer;
  private release: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly messages: Iterator<Buffer>,
    private readonly key: TsigKey,
    requestMac: Buffer,
    private readonly now: () => number,
    /** Who it runs for (the slots' unit), and the slots. */
    private readonly secondary: string,
    private readonly slots: TransferSlots | undefined,
  ) {
    this.mac = requestMac;
  }

  /** Calls `ready` once it may be sent (its secondary's slot), perhaps at once. */
  start(ready: () => void): void {
    if (!this.slots) return ready();
    this.release = this.slots.acquire(this.secondary, () => {
      if (!this.closed) ready();
    });
  }

  /** The next message, signed; undefined once all are given (the slot is then freed). */
  next(): Buffer | undefined {
    if (this.closed) return undefined;
    const made = this.messages.next();
    if (made.done) {
      this.close();
      return undefined;
    }
    const signed = sign(made.value, this.key, this.now(), this.index === 0 ? { requestMac: this.mac } : { priorMac: this.mac });
    this.index++;
    this.mac = signed.mac;
    return signed.message;
  }

  /** Done, or its connection gone: frees the slot (or leaves the line). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.release?.();
  }

  /** Every message at once (a caller without slices: tests, tools). */
  all(): Buffer[] {
    const out: Buffer[] = [];
    for (let m = this.next(); m; m = this.next()) out.push(m);
    this.close();
    return out;
  }
}
