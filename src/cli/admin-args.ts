// The operator commands' arguments: the options `palisade admin` takes, and the checks shared by
// its commands (a bad argument is a UsageError: one line on stderr, exit 2).
import type { parseArgs } from 'node:util';
import { canonicalNode, checkNode, type EdgeNode } from '../model/node.ts';
import { normaliseDomainName } from '../model/names.ts';
import type { Limits } from '../model/user.ts';
import type { Store } from '../store/types.ts';
import type { Config } from '../config.ts';

export class UsageError extends Error {}

export const OPTIONS = {
  name: { type: 'string' },
  email: { type: 'string' },
  user: { type: 'string' },
  label: { type: 'string' },
  ipv4: { type: 'string' },
  ipv6: { type: 'string' },
  location: { type: 'string' },
  status: { type: 'string' },
  url: { type: 'string' },
  node: { type: 'string' },
  cert: { type: 'string' },
  key: { type: 'string' },
  'max-domains': { type: 'string' },
  'max-records': { type: 'string' },
  'max-iplists': { type: 'string' },
  'max-ips': { type: 'string' },
  'reserved-zones': { type: 'boolean' },
  force: { type: 'boolean' },
  address: { type: 'string', multiple: true },
  port: { type: 'string' },
  'tsig-key': { type: 'string' },
  zone: { type: 'string', multiple: true },
  'no-catalog': { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  'replace-all': { type: 'boolean' },
  continue: { type: 'boolean' },
} as const;

export interface AdminContext {
  store: Store;
  values: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true }>>['values'];
  verb: string | undefined;
  arg: string | undefined;
  arg2: string | undefined;
  options: { secretKey?: Buffer; config?: Config };
}

/** Commands by "noun verb"; each returns what is printed. */
export type AdminCommands = Record<string, (ctx: AdminContext) => unknown>;

export function positiveInt(text: string | undefined, what: string): number {
  if (text === undefined || !/^[1-9]\d{0,9}$/.test(text)) throw new UsageError(`${what} must be a positive integer`);
  return Number(text);
}

export function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${flag} is required`);
  return value;
}

export function nodeAddress(value: string | undefined): string | null | undefined {
  return value === 'none' ? null : value;
}

export function validNode(node: EdgeNode): EdgeNode {
  const errors = checkNode(node);
  if (errors.length > 0) throw new UsageError(errors.map((e) => `--${e.field}: ${e.message}`).join('\n'));
  return canonicalNode(node);
}

export function limitsFrom(values: { 'max-domains'?: string; 'max-records'?: string; 'max-iplists'?: string; 'max-ips'?: string }): Partial<Limits> {
  const limits: Partial<Limits> = {};
  if (values['max-domains']) limits.max_domains = positiveInt(values['max-domains'], '--max-domains');
  if (values['max-records']) limits.max_records_per_domain = positiveInt(values['max-records'], '--max-records');
  if (values['max-iplists']) limits.max_iplists = positiveInt(values['max-iplists'], '--max-iplists');
  if (values['max-ips']) limits.max_ips_per_list = positiveInt(values['max-ips'], '--max-ips');
  return limits;
}

export async function refuseDuplicateNodeName(store: Store, name: string, except?: number): Promise<void> {
  const other = (await store.listNodes()).find((n) => n.name === name && n.id !== except);
  if (other) throw new UsageError(`node ${other.id} is already named ${name}`);
}

export function domainArg(text: string | undefined): string {
  const checked = normaliseDomainName(required(text, 'DOMAIN'));
  if (!checked.ok) throw new UsageError(`DOMAIN: ${checked.message}`);
  return checked.value;
}

