// The operator's list of secondary name servers allowed to transfer zones from this name server,
// each with its addresses, its TSIG key and the zones it takes (none listed: every zone). Kept as
// a JSON file in the name server's data directory (`palisade admin secondary …` writes it); every
// DNS process reads it and reads it again when it changes, so a change needs no restart.
import { readFileSync, renameSync, statSync, unwatchFile, watchFile, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseTsigKey, type TsigKey } from './tsig.ts';

export const SECONDARIES_FILE = 'secondaries.json';

export interface SecondaryEntry {
  name: string;
  /** IP addresses transfers are allowed from and NOTIFY is sent to. */
  addresses: string[];
  /** Where NOTIFY goes (default 53). */
  port: number;
  /** `hmac-sha256:NAME:BASE64`. */
  tsigKey: string;
  /** Zones it takes; empty: every zone served. */
  zones: string[];
  /** Whether the catalog zone is offered to it (RFC 9432). */
  catalog: boolean;
}

export interface Secondary extends Omit<SecondaryEntry, 'tsigKey'> {
  key: TsigKey;
}

/** Checks one entry as an operator gave it; returns a message for the first problem. */
export function checkEntry(entry: SecondaryEntry): string | undefined {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(entry.name)) return 'the name is 1–63 letters, digits, ".", "_" or "-"';
  if (entry.addresses.length === 0) return 'at least one address is needed';
  const bad = entry.addresses.find((a) => isIP(a) === 0);
  if (bad) return `${bad} is not an IP address`;
  if (!Number.isInteger(entry.port) || entry.port < 1 || entry.port > 65535) return 'the port is 1–65535';
  const key = parseTsigKey(entry.tsigKey);
  if (typeof key === 'string') return `TSIG key: ${key}`;
  return undefined;
}

/** The TSIG key name of an entry (lower case), or undefined when its key does not read. */
export function keyNameOf(entry: SecondaryEntry): string | undefined {
  const key = parseTsigKey(entry.tsigKey);
  return typeof key === 'string' ? undefined : key.name;
}

/**
 * The entry already using `entry`'s TSIG key name, if any. Each secondary needs a key name of its
 * own: the name is how a signed message says who sent it, and two secondaries under one name
 * would each be taken for the other.
 */
export function keyNameTaken(entries: readonly SecondaryEntry[], entry: SecondaryEntry): SecondaryEntry | undefined {
  const name = keyNameOf(entry);
  return entries.find((e) => e.name !== entry.name && keyNameOf(e) === name);
}

export function readEntries(file: string): SecondaryEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const parsed = JSON.parse(text) as { secondaries?: SecondaryEntry[] };
  return (parsed.secondaries ?? []).map((e) => ({ ...e, port: e.port ?? 53, zones: e.zones ?? [], catalog: e.catalog ?? true }));
}

/** Writes the list whole (a new file renamed over the old: readers never see half of it); the secrets make it owner-only. */
export function writeEntries(file: string, entries: readonly SecondaryEntry[]): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify({ secondaries: entries }, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
}

/** Whether two keys are the same key: name and secret (an algorithm is all HMAC-SHA256). */
export const sameKey = (a: TsigKey, b: TsigKey) => a.name === b.name && a.secret.equals(b.secret);

/** IPv4-mapped IPv6 addresses (how a dual-stack socket shows IPv4 clients) as plain IPv4. */
const plain = (address: string) => (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address).toLowerCase();

/** Whether a secondary takes a zone (none listed: every zone). */
const takes = (s: Secondary, zone: string) => s.zones.length === 0 || s.zones.includes(zone);

/** The list as the DNS server uses it, kept current with its file. */
export class Secondaries {
  private list: Secondary[] = [];
  /** The entries the list was made from (to tell a change from a rewrite of the same list). */
  private entries: SecondaryEntry[] = [];
  /** By key name: the distinct keys of that name (more than one only in a file written by hand). */
  private keys = new Map<string, TsigKey[]>();
  private watching = false;
  /** Called after each read of the file that changed the list. */
  onChange: () => void = () => {};

  constructor(
    private readonly file: string | undefined,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    this.reload();
  }

  /** From a list (tests, or a server without a file). */
  static of(entries: SecondaryEntry[]): Secondaries {
    const s = new Secondaries(undefined);
    s.set(entries);
    return s;
  }

  private set(entries: SecondaryEntry[]): void {
    const list: Secondary[] = [];
    for (const entry of entries) {
      const problem = checkEntry(entry);
      if (problem) throw new Error(`secondary ${entry.name}: ${problem}`);
      const { tsigKey, ...rest } = entry;
      list.push({ ...rest, addresses: rest.addresses.map(plain), zones: rest.zones.map((z) => z.toLowerCase()), key: parseTsigKey(tsigKey) as TsigKey });
    }
    const changed = JSON.stringify(entries) !== JSON.stringify(this.entries);
    this.entries = entries;
    this.list = list;
    const keys = new Map<string, TsigKey[]>();
    for (const { key } of list) {
      const named = keys.get(key.name) ?? [];
      if (!named.some((k) => sameKey(k, key))) named.push(key);
      keys.set(key.name, named);
    }
    this.keys = keys;
    if (changed) this.onChange();
  }


  /** Reads the file again; a file that does not read keeps the list as it was (and says why). */
  reload(): void {
    if (!this.file) return;
    try {
      this.set(readEntries(this.file));
    } catch (error) {
      this.onError(error);
    }
  }

  /** Re-reads the file whenever it changes (polled: the file is replaced by rename). */
  watch(intervalMs = 1000): void {
    if (!this.file || this.watching) return;
    this.watching = true;
    watchFile(this.file, { interval: intervalMs, persistent: false }, () => this.reload());
  }

  close(): void {
    if (this.file && this.watching) unwatchFile(this.file);
    this.watching = false;
  }

  get all(): readonly Secondary[] {
    return this.list;
  }

  /** The keys named `name` (a message's TSIG is checked against each: the one whose MAC matches says who signed). */
  keysNamed(name: string): readonly TsigKey[] {
    return this.keys.get(name) ?? [];
  }

  /** Key names that more than one secondary uses (a file written by hand): worth a warning. */
  sharedKeyNames(): string[] {
    const seen = new Map<string, number>();
    for (const s of this.list) seen.set(s.key.name, (seen.get(s.key.name) ?? 0) + 1);
    return [...seen].filter(([, n]) => n > 1).map(([name]) => name);
  }

  /** The secondaries a client at `address` signing with `key` (name and secret) is. */
  private matching(address: string, key: TsigKey): Secondary[] {
    const from = plain(address);
    return this.list.filter((s) => sameKey(s.key, key) && s.addresses.includes(from));
  }

  /** Whether a client at `address`, signed with `key`, may transfer `zone` (`catalog`: the catalog zone). */
  allows(address: string, key: TsigKey, zone: string, catalog: boolean): boolean {
    return this.matching(address, key).some((s) => (catalog ? s.catalog : takes(s, zone)));
  }

  /**
   * What the catalog zone lists for that client: whether a served zone is one it may transfer (and
   * that a secondary offered the catalog takes). Nothing else: a list of zones is a list of other
   * customers' domains.
   */
  catalogFilter(address: string, key: TsigKey): (zone: string) => boolean {
    const offered = this.matching(address, key).filter((s) => s.catalog);
    return (zone) => offered.some((s) => takes(s, zone));
  }

  /** The secondaries to NOTIFY of a change of `zone`. */
  takers(zone: string, catalog: boolean): Secondary[] {
    return this.list.filter((s) => (catalog ? s.catalog : takes(s, zone)));
  }

  /** The file's modification time (for tests and health). */
  fileTime(): number {
    try {
      return this.file ? statSync(this.file).mtimeMs : 0;
    } catch {
      return 0;
    }
  }
}
