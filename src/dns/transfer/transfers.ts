// Zone transfers as one piece for the DNS server: the secondaries (kept current with their file),
// the responder the query handler consults, and — in the one process of a name server that
// sends them — NOTIFY on every change of a zone, and of the catalog when zones come and go.
import type { Logger } from 'pino';
import type { ZoneIndex } from '../zone/index.ts';
import { isSignedZone, type ZoneData } from '../zone/types.ts';
import { CatalogSerial } from './catalog-serial.ts';
import { IxfrJournal, type JournalLimits } from './journal.ts';
import { NotifySender } from './notify.ts';
import type { NotifySources } from './notify-source.ts';
import { RefusalLog, WINDOW_MS } from './refusal-log.ts';
import { TransferResponder } from './responder.ts';
import { Secondaries } from './secondaries.ts';
import { DEFAULT_TRANSFERS_PER_SECONDARY, TransferSlots } from './slots.ts';
import { catalogContent } from './zone-content.ts';

export interface TransferSettings {
  /** The secondaries' file (`palisade admin secondary …`); absent: none (everyone REFUSED). */
  secondariesFile?: string;
  /** The list itself, instead of a file (tests; a server configured in code). */
  secondaries?: Secondaries;
  /** The catalog zone's name (RFC 9432); absent: none. */
  catalog?: string;
  /** Send NOTIFY (the name server's primary process only: one notice per change per host). */
  notify: boolean;
  /** Bytes of IXFR history kept per zone, per account and in all (default: JOURNAL_LIMITS). */
  journal?: JournalLimits;
  /** Where NOTIFY leaves from, per family (see notify-source.ts); absent: the wildcard address. */
  notifySources?: NotifySources;
  /** Zone transfers one secondary (its TSIG key) may have running at once; more wait their turn (default 2). */
  perSecondary?: number;
}

export class Transfers {
  readonly secondaries: Secondaries;
  readonly responder: TransferResponder;
  readonly catalogSerial: CatalogSerial;
  readonly journal: IxfrJournal;
  readonly slots: TransferSlots;
  readonly notifier: NotifySender | undefined;
  /**
   * Zones to NOTIFY once the current batch is applied (the latest state of each); the catalog is
   * queued under "\n" + its name, which no zone name can be.
   */
  private readonly queued = new Map<string, ZoneData | undefined>();
  private flushScheduled = false;
  private unwatch: (() => void) | undefined;
  private readonly refusalFlush: NodeJS.Timeout;

  constructor(
    private readonly settings: TransferSettings,
    private readonly index: ZoneIndex,
    revision: () => number,
    log: Logger,
  ) {
    this.secondaries = settings.secondaries ?? new Secondaries(settings.secondariesFile, (error) => log.error({ err: error }, 'dns: the secondaries file does not read; the list stays as it was'));
    this.journal = new IxfrJournal(settings.journal);
    this.catalogSerial = new CatalogSerial(revision);
    let lastQueuedLog = 0;
    this.slots = new TransferSlots(settings.perSecondary ?? DEFAULT_TRANSFERS_PER_SECONDARY, (secondary, waiting) => {
      // At most a line a second: a secondary may ask for thousands of zones at once.
      if (Date.now() - lastQueuedLog < 1000) return;
      lastQueuedLog = Date.now();
      log.info({ key: secondary, waiting, perSecondary: this.slots.perSecondary }, 'dns: a secondary has the most zone transfers it may run at once (PALISADE_DNS_TRANSFERS_PER_SECONDARY); its further ones wait their turn');
    });
    const refusals = new RefusalLog(({ message, fields }) => log.warn(fields, message));
    this.refusalFlush = setInterval(() => refusals.flush(), WINDOW_MS / 6).unref();
    this.responder = new TransferResponder({ secondaries: this.secondaries, index, catalog: settings.catalog, catalogSerial: () => this.catalogSerial.current(), journal: this.journal, refusals, slots: this.slots });
    this.notifier = settings.notify ? new NotifySender(this.secondaries, log.child({ component: 'notify' }), undefined, undefined, settings.notifySources) : undefined;
    const warnShared = () => {
      for (const name of this.secondaries.sharedKeyNames()) log.warn({ key: name }, 'dns: several secondaries use one TSIG key name: each is told by its secret, but give each a name of its own (palisade admin secondary add refuses a name in use)');
    };
    warnShared();
    // Who takes which zones changed: each secondary's catalog (the zones it may transfer) may have
    // too, so its serial moves and the secondaries hear of it.
    this.secondaries.onChange = () => {
      warnShared();
      this.catalogSerial.changed();
      if (this.notifier && settings.catalog) {
        this.queued.set(`\n${settings.catalog}`, undefined);
        this.schedule();
      }
    };
    this.secondaries.watch();
    const served = new Set<string>();
    // The serial and SOA each zone was last seen at (what a journal step goes from).
    const lastSeen = new Map<string, { serial: number; soa: ZoneData['soa'] }>();
    this.unwatch = index.watch((name, zone, before, adopted) => {
      // A DNS worker's zone served from its base all along, about to change: already a member
      // (no catalog change), and its serial is where the journal's next step starts.
      if (adopted && zone) {
        if (!isSignedZone(zone)) served.add(name);
        lastSeen.set(name, { serial: zone.serial, soa: zone.soa });
        return;
      }
      // Differences are kept only while someone may ask for them.
      if (this.secondaries.all.length > 0) {
        const last = lastSeen.get(name);
        this.journal.record(name, zone, last?.serial, last?.soa, before);
      } else if (this.journal.entries > 0) this.journal.clear();
      if (zone) lastSeen.set(name, { serial: zone.serial, soa: zone.soa });
      else lastSeen.delete(name);
      // Membership, for the catalog's serial (every process keeps it, so all answer alike). A
      // signed zone is not offered to secondaries: it leaves the catalog, and is not notified.
      const offered = zone !== undefined && !isSignedZone(zone);
      const was = served.has(name);
      if (offered && !was) served.add(name);
      if (!offered) served.delete(name);
      if (was !== offered) this.catalogSerial.changed();
      if (!this.notifier) return;
      if (offered || !zone) this.queued.set(name, zone);
      if (was !== offered && settings.catalog) this.queued.set(`\n${settings.catalog}`, undefined);
      this.schedule();
    });
    // Zones loaded before the watch began count as members, at the serial they have.
    for (const name of index.zoneNames()) {
      const zone = index.get(name)!;
      if (!isSignedZone(zone)) served.add(name);
      lastSeen.set(name, { serial: zone.serial, soa: zone.soa });
    }
  }

  /** Notices go out once the batch that changed the zones has been applied (one per zone). */
  private schedule(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      const notifier = this.notifier!;
      if (this.secondaries.all.length === 0) return this.queued.clear();
      for (const [name, zone] of this.queued) {
        if (name.startsWith('\n')) {
          const catalog = name.slice(1);
          notifier.changed(catalog, catalogContent(catalog, this.catalogSerial.current(), () => []).soa, true);
        } else if (zone && !zone.stale) notifier.changed(name, zone.soa);
        else if (zone?.stale) {
          const current = this.index.get(name);
          if (current) notifier.changed(name, current.soa);
        }
      }
      this.queued.clear();
    });
  }

  close(): void {
    clearInterval(this.refusalFlush);
    this.unwatch?.();
    this.secondaries.close();
    this.notifier?.close();
  }
}
