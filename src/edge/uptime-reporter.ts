// Sends what the recorder gathered, every `intervalMs` and soon after a backend goes down or
// comes back (so that the customer hears of it within seconds, not at the next round). A report
// that cannot be delivered is kept and sent again first (at most MAX_PENDING of them: an API
// away for long loses the oldest minutes, never the edge's memory); one report in flight at a time.
import type { Logger } from 'pino';
import type { UptimeReport } from '../uptime/report.ts';
import type { UptimeRecorder } from './uptime-recorder.ts';

const MAX_PENDING = 30;
/** A switch is reported this soon after it (switches of several backends in one round go together). */
const SWITCH_DELAY_MS = 50;

export class UptimeReporter {
  private readonly pending: UptimeReport[] = [];
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  dropped = 0;
  sent = 0;

  constructor(
    private readonly recorder: UptimeRecorder,
    private readonly send: (report: UptimeReport) => Promise<void>,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.recorder.onSwitch = () => {
      this.soon ??= setTimeout(() => {
        this.soon = undefined;
        void this.flush();
      }, SWITCH_DELAY_MS);
    };
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  /** Takes what was gathered and sends it with any report still pending. */
  flush(): Promise<void> {
    this.pending.push(this.recorder.drain());
    while (this.pending.length > MAX_PENDING) {
      this.pending.shift();
      this.dropped++;
    }
    this.sending ??= this.sendPending().finally(() => (this.sending = undefined));
    return this.sending;
  }

  private async sendPending(): Promise<void> {
    while (this.pending.length > 0) {
      const report = this.pending[0]!;
      try {
        await this.send(report);
        this.pending.shift();
        this.sent++;
      } catch (error) {
        this.log.warn({ err: (error as Error).message, pending: this.pending.length }, 'edge: uptime report not delivered; kept for the next round');
        return;
      }
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.soon) clearTimeout(this.soon);
    this.recorder.onSwitch = undefined;
  }
}
