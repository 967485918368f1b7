// Opens a name server's local state so that damage to it never becomes a crash loop. Before
// mapping the LMDB file, its meta pages and size are checked (lmdb-file-check.ts); a marker file
// brackets start-up's reading of the state, so a crash while reading (damage no check sees)
// is recognised at the next start; LMDB refusing to open, or a stored document that does not
// parse, count the same. Damaged state is moved aside (kept for inspection, the newest few only)
// with one log line, and the consumer (name server, edge) starts empty and loads a fresh snapshot
// from the API. A full disk is no damage: the state is opened all the same (local-state.ts).
import { existsSync, readdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { diskFailureOf } from '../common/lmdb-commit-guard.ts';
import { lmdbFileProblem } from './lmdb-file-check.ts';

/** Moved-aside states kept; older ones are deleted, so repeated damage cannot fill the disk. */
const KEEP_DAMAGED = 3;

export class LocalStateGuard<State> {
  private readonly marker: string;

  constructor(
    private readonly dir: string,
    private readonly log: Logger,
    private readonly openState: (dir: string) => State,
    /** Who starts empty, for the log line. */
    private readonly who = 'the name server',
  ) {
    this.marker = `${dir}.loading`;
  }

  /** Opens the state, moving it aside first when it is damaged. Marks that reading has begun. */
  open(): State {
    const reason = existsSync(this.marker) ? 'the last start ended while reading it (the process died there: damage the checks did not see?)' : lmdbFileProblem(this.dir);
    if (reason) this.moveAside(reason);
    this.mark();
    try {
      return this.openState(this.dir);
    } catch (error) {
      this.moveAside(`LMDB could not open it (${(error as Error).message})`);
      this.mark();
      return this.openState(this.dir);
    }
  }

  /**
   * Writes the marker. A full or failing disk does not stop the start: the state is read without
   * it (a crash while reading then goes unrecognised once), and no empty marker is left behind
   * (the next start would take it for such a crash).
   */
  private mark(): void {
    try {
      writeFileSync(this.marker, `${process.pid}\n`);
    } catch (error) {
      if (diskFailureOf(error) === undefined) throw error;
      rmSync(this.marker, { force: true });
    }
  }

  /** Start-up has read the whole state: a later crash is not the state's fault. */
  loaded(): void {
    if (existsSync(this.marker)) unlinkSync(this.marker);
  }

  /** Moves the damaged state aside (one log line) so that the next open starts empty. */
  moveAside(reason: string): void {
    const movedTo = `${this.dir}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    if (existsSync(this.dir)) renameSync(this.dir, movedTo);
    if (existsSync(this.marker)) unlinkSync(this.marker);
    this.log.error({ dir: this.dir, movedTo, reason }, `sync: local state is damaged; moved it aside and starting empty: ${this.who} loads a fresh snapshot from the API`);
    const prefix = `${basename(this.dir)}.damaged-`;
    const damaged = readdirSync(dirname(this.dir)).filter((name) => name.startsWith(prefix)).sort();
    for (const old of damaged.slice(0, Math.max(0, damaged.length - KEEP_DAMAGED))) rmSync(join(dirname(this.dir), old), { recursive: true, force: true });
  }
}
