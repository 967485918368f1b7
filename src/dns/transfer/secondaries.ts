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

/** IPv4-mapped IPv6 addresses (how a dual-stack socket shows IPv4 clients) as plain IPv4. */
const plain = (address: string) => (address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address).toLowerCase();

/** The list as the DNS server uses it, kept current with its file. */
export class Secondaries {
  private list: Secondary[] = [];
  private keys = new Map<string, TsigKey>();
  private watching = false;

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
    this.list = list;
    this.keys = new Map(list.map((s) => [s.key.name, s.key]));
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

  key(name: string): TsigKey | undefined {
    return this.keys.get(name);
  }

  /** Whether a client at `address`, signed with `keyName`, may transfer `zone`. */
  allows(address: string, keyName: string, zone: string, catalog: boolean): boolean {
    const from = plain(address);
    return this.list.some((s) => s.key.name === keyName && s.addresses.includes(from) && (catalog ? s.catalog : s.zones.length === 0 || s.zones.includes(zone)));
  }

  /** The secondaries to NOTIFY of a change of `zone`. */
  takers(zone: string, catalog: boolean): Secondary[] {
    return this.list.filter((s) => (catalog ? s.catalog : s.zones.length === 0 || s.zones.includes(zone)));
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
