// The kinds of setting an environment variable can hold. Each kind knows how to read its text, what
// a wrong value's error says (one line, starting with the variable's name), and how its default is
// shown in the README and `palisade --help`. A part's settings are a table of these (api.ts, dns.ts…).
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { canonicalIpOrPrefix } from '../model/ip.ts';
import { normaliseDomainName } from '../model/names.ts';

/** One environment variable: how it is read and what the operator is told of it. */
export interface Setting<T> {
  /** The README's description (Markdown, one table cell). */
  help: string;
  /** The default as the README shows it (Markdown); `—` when unset means off or none. */
  shown: string;
  /** A value from the variable's text (undefined: unset); a wrong text adds a problem. */
  read(name: string, text: string | undefined, problems: string[]): T;
  /** Set by the program for its own child processes, not by an operator: left out of the docs. */
  internal?: boolean;
}

/** What the README and `--help` say of a setting. */
export interface Described {
  help: string;
  /** Overrides the default shown (e.g. "one per core"). */
  shown?: string;
}

/** A part's settings by variable name. */
export type SettingTable = Record<string, Setting<unknown>>;

/** The values a table's settings read to. */
export type Values<T extends SettingTable> = { [K in keyof T]: T[K] extends Setting<infer V> ? V : never };

/** Every setting of a table read from the environment, problems collected. */
export function readTable<T extends SettingTable>(table: T, env: Record<string, string | undefined>, problems: string[]): Values<T> {
  const out: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(table)) out[name] = setting.read(name, env[name], problems);
  return out as Values<T>;
}

const code = (value: string | number | boolean) => `\`${value}\``;
const NONE = '—';

/** Text as given; unset: the fallback (an empty text stays empty). */
export function text(fallback: string, d: Described): Setting<string> {
  return { help: d.help, shown: d.shown ?? code(fallback), read: (_n, t) => t ?? fallback };
}

/** Text as given, or undefined when unset. */
export function optionalText(d: Described): Setting<string | undefined> {
  return { help: d.help, shown: d.shown ?? NONE, read: (_n, t) => t };
}

/** Set to anything but "": true (the NO_COLOR convention). */
export function present(d: Described): Setting<boolean> {
  return { help: d.help, shown: d.shown ?? 'unset', read: (_n, t) => t !== undefined && t !== '' };
}

function integer(name: string, t: string, min: number, max: number, problems: string[]): number {
  const n = /^\d+$/.test(t) ? Number(t) : NaN;
  if (!(n >= min && n <= max)) problems.push(`${name}=${t}: must be an integer from ${min} to ${max}`);
  return n;
}

/** A whole number within bounds. */
export function int(fallback: number, min: number, max: number, d: Described): Setting<number> & { min: number; max: number } {
  return { help: d.help, shown: d.shown ?? code(fallback), min, max, read: (n, t, p) => (t === undefined ? fallback : integer(n, t, min, max, p)) };
}

/** A whole number within bounds, or undefined when unset (and when empty, if `emptyIsUnset`). */
export function optionalInt(min: number, max: number, d: Described & { emptyIsUnset?: boolean }): Setting<number | undefined> & { min: number; max: number } {
  const unset = (t: string | undefined) => t === undefined || (d.emptyIsUnset === true && t === '');
  return { help: d.help, shown: d.shown ?? NONE, min, max, read: (n, t, p) => (unset(t) ? undefined : integer(n, t!, min, max, p)) };
}

const TRUE = ['true', '1', 'on'];

/** true/false (also 1/0, on/off). */
export function bool(fallback: boolean, d: Described): Setting<boolean> {
  return {
    help: d.help,
    shown: d.shown ?? code(fallback),
    read(name, t, problems) {
      if (t === undefined) return fallback;
      if (![...TRUE, 'false', '0', 'off'].includes(t)) problems.push(`${name}=${t}: must be true or false`);
      return TRUE.includes(t);
    },
  };
}

/** An IP address to listen on (or localhost). */
export function host(fallback: string, d: Described): Setting<string> {
  return {
    help: d.help,
    shown: d.shown ?? code(fallback),
    read(name, t, problems) {
      const value = t ?? fallback;
      if (isIP(value) === 0 && value !== 'localhost') problems.push(`${name}=${value}: must be an IP address to listen on`);
      return value;
    },
  };
}

/** A domain name, normalised (lower case, no trailing dot). */
export function domain(fallback: string, d: Described): Setting<string> {
  return { help: d.help, shown: d.shown ?? code(fallback), read: (name, t, problems) => checkedDomain(name, t ?? fallback, problems) };
}

export function checkedDomain(name: string, value: string, problems: string[]): string {
  const checked = normaliseDomainName(value);
  if (!checked.ok) problems.push(`${name}=${value}: ${checked.message}`);
  return checked.ok ? checked.value : value;
}

/** Comma-separated domain names, each checked (repeats dropped when `unique`); undefined when unset. */
export function domainList(d: Described & { unique?: boolean }): Setting<string[] | undefined> {
  return {
    help: d.help,
    shown: d.shown ?? NONE,
    read(name, t, problems) {
      if (t === undefined) return undefined;
      const names: string[] = [];
      for (const entry of t.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
        const checked = normaliseDomainName(entry);
        if (!checked.ok) problems.push(`${name}: "${entry}" ${checked.message}`);
        else if (d.unique !== true || !names.includes(checked.value)) names.push(checked.value);
      }
      return names;
    },
  };
}

/**
 * One of a few words. `must` is what the error says the value must be (default: "one of a, b");
 * an empty text is the default when `emptyIsUnset`, else wrong.
 */
export function choice<T extends string>(values: readonly T[], fallback: T, d: Described & { must?: string; emptyIsUnset?: boolean }): Setting<T> {
  return {
    help: d.help,
    shown: d.shown ?? code(fallback),
    read(name, t, problems) {
      if (t === undefined || (d.emptyIsUnset === true && t === '')) return fallback;
      if (!(values as readonly string[]).includes(t)) {
        problems.push(`${name}=${t}: must be ${d.must ?? `one of ${values.join(', ')}`}`);
        return fallback;
      }
      return t as T;
    },
  };
}

/** Comma-separated addresses or CIDR prefixes, canonical. */
export function prefixes(d: Described): Setting<string[]> {
  return {
    help: d.help,
    shown: d.shown ?? NONE,
    read(name, t, problems) {
      const out: string[] = [];
      for (const entry of (t ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
        const checked = canonicalIpOrPrefix(entry);
        if ('value' in checked) out.push(checked.value);
        else problems.push(`${name}: ${checked.error}`);
      }
      return out;
    },
  };
}

/** Comma-separated address:port pairs (IPv6 as [addr]:port). */
export function hostPorts(d: Described): Setting<string[]> {
  return {
    help: d.help,
    shown: d.shown ?? NONE,
    read(name, t, problems) {
      const out: string[] = [];
      for (const entry of (t ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
        const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(entry);
        if (!m || Number(m[3]) > 65535 || isIP(m[1] ?? m[2]!) === 0) problems.push(`${name}: "${entry}" must be address:port ([IPv6]:port)`);
        else out.push(entry);
      }
      return out;
    },
  };
}

/** Text matching a pattern, or undefined when unset or empty; `must` says what it must be. */
export function pattern(re: RegExp, must: string, d: Described): Setting<string | undefined> {
  return {
    help: d.help,
    shown: d.shown ?? NONE,
    read(name, t, problems) {
      if (t === undefined || t === '') return undefined;
      if (!re.test(t)) {
        problems.push(`${name}: ${must}`);
        return undefined;
      }
      return t;
    },
  };
}

/** Hex digits (a key), as bytes; undefined when unset or empty. */
export function hexKey(re: RegExp, must: string, d: Described): Setting<Buffer | undefined> {
  const checked = pattern(re, must, d);
  return { ...checked, read: (name, t, problems) => checkHexKey(checked, name, t, problems) };
}

function checkHexKey(checked: Setting<string | undefined>, name: string, t: string | undefined, problems: string[]): Buffer | undefined {
  const value = checked.read(name, t, problems);
  return value === undefined ? undefined : Buffer.from(value, 'hex');
}

/** HMAC keys: 16 to 64 bytes as hex. */
export const LONG_HEX = /^(?:[0-9a-fA-F]{2}){16,64}$/;
export const LONG_HEX_MUST = 'must be 32 to 128 hex digits (e.g. from `openssl rand -hex 32`)';

/** A file named by the operator, read now: its text, or undefined when unset or empty. */
export function file(d: Described): Setting<string | undefined> {
  return { help: d.help, shown: d.shown ?? NONE, read: (name, t, problems) => fileText(name, t, problems) };
}

export function fileText(name: string, path: string | undefined, problems: string[]): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    problems.push(`${name}=${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    return undefined;
  }
}

/** Text that, when set and not empty, must match `re` (the error: `NAME=value: must …`). */
export function checkedText(re: RegExp, must: string, d: Described): Setting<string | undefined> {
  return {
    help: d.help,
    shown: d.shown ?? NONE,
    read(name, t, problems) {
      if (t && !re.test(t)) problems.push(`${name}=${t}: ${must}`);
      return t;
    },
  };
}

/** An http:// or https:// URL. */
export const HTTP_URL = /^https?:\/\/[^\s]+$/;
export const HTTP_URL_MUST = 'must be an http:// or https:// URL';
