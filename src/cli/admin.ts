// Operator commands: users, API keys and edge nodes, straight on the store (the embedded store
// may be shared with a running server: LMDB serialises writers across processes).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { certificateFromPem, type CertificateState } from '../model/certificate.ts';
import { SecretBox } from '../certs/secret-box.ts';
import { certificateFit } from '../certs/cert-names.ts';
import { ApiError } from '../errors.ts';
import { canonicalNode, checkNode, NODE_STATUSES, type EdgeNode, type NodeStatus } from '../model/node.ts';
import { generateApiKey, hashApiKey, type Limits } from '../model/user.ts';
import type { Store } from '../store/types.ts';
import { loadConfig, type Config } from '../config.ts';
import { createLogger } from '../log.ts';
import { normaliseDomainName } from '../model/names.ts';
import { Notifications } from '../notify/notifications.ts';
import { Ownership } from '../ownership/ownership.ts';
import { StoreError } from '../store/errors.ts';
import { checkEntry, keyNameOf, keyNameTaken, readEntries, SECONDARIES_FILE, writeEntries, type SecondaryEntry } from '../dns/transfer/secondaries.ts';
import { parseTsigKey } from '../dns/transfer/tsig.ts';
import { importZoneFile } from '../zonefile/import.ts';

export const ADMIN_USAGE = `usage: palisade admin <command>
  user create --name NAME --email EMAIL [--max-domains N] [--max-records N] [--max-iplists N] [--max-ips N] [--reserved-zones]
  user reserved-zones ID allow|deny        whether the user may register the service's own (reserved) zones
  user limits ID [--max-domains N] [--max-records N] [--max-iplists N] [--max-ips N]
  user disable ID | user enable ID         a disabled user's keys are refused; its data stays and is served
  user delete ID [--force]                 refused while the user holds domains or IP lists, unless --force (removes them)
  user list
  key create --user ID [--label TEXT]      prints the new key once
  key list --user ID
  key revoke KEY_ID
  node add --name NAME [--ipv4 ADDR] [--ipv6 ADDR] --location CC [--status ${NODE_STATUSES.join('|')}]
  node update ID [--name NAME] [--ipv4 ADDR|none] [--ipv6 ADDR|none] [--location CC] [--status S]
  node remove ID
  node list
  consumer add --name NAME [--url URL] [--node ID]
                                           a consumer of the change feed: a name server, or with --node the edge
                                           serving as that node; prints its token and secret once
  consumer list
  consumer remove ID
  cert put DOMAIN --cert FILE --key FILE   stores a certificate (leaf, then chain, PEM) and its key (sealed with
                                           PALISADE_SECRET_KEY) for the domain; edges use it from the next handshake.
                                           Refused unless it covers DOMAIN, names only DOMAIN and names under it,
                                           is valid now and matches the key
  cert remove DOMAIN
  cert list
  domain claims DOMAIN                     every account's claim of the name: who holds it, proven or pending, the
                                           pair and token it is proven by, what was last seen
  domain release DOMAIN --user ID          removes that account's claim (proven or not: a dispute) and tells it
                                           (domain.claim_released)
  domain prove DOMAIN --user ID            proves that account's claim on the operator's word (a dispute settled
                                           outside): other accounts' pending claims at or under it are released
  zone import DOMAIN FILE [--dry-run] [--replace-all]
                                           replaces the holder's records with a BIND zone file's, in one change (as POST
                                           /domains/DOMAIN/zonefile); prints what changed, or each bad line
  secondary add --name NAME --address IP [--address IP…] --tsig-key [hmac-sha256:]KEYNAME:BASE64 [--port N]
                [--zone DOMAIN…] [--no-catalog]
                                           a secondary name server allowed to transfer zones (AXFR/IXFR with that TSIG
                                           key) and sent NOTIFY on every change: every zone, or only the --zone ones;
                                           the catalog zone (listing only those zones) unless --no-catalog. The key
                                           name must be one no other secondary uses. Kept in the data directory of the
                                           name server this runs beside; its DNS processes read it within a second
  secondary list                           (secrets not shown)
  secondary remove NAME`;

export class UsageError extends Error {}

const secondariesFile = (config: Config | undefined) => join((config ?? loadConfig()).dataDir, SECONDARIES_FILE);

/** A secondary as the operator sees it: the key's name and algorithm, never its secret. */
function shownSecondary(entry: SecondaryEntry): Record<string, unknown> {
  const { tsigKey, ...rest } = entry;
  const key = parseTsigKey(tsigKey);
  return { ...rest, tsig_key: typeof key === 'string' ? key : `${key.algorithm}:${key.name}` };
}

/** What the operator sees of a certificate: never its key. */
function certificateSummary(cert: CertificateState): Record<string, unknown> {
  const { key: _key, cert: _cert, chain: _chain, ...rest } = cert;
  return rest;
}

type Out = (value: unknown) => void;

const OPTIONS = {
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
} as const;

function positiveInt(text: string | undefined, what: string): number {
  if (text === undefined || !/^[1-9]\d{0,9}$/.test(text)) throw new UsageError(`${what} must be a positive integer`);
  return Number(text);
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${flag} is required`);
  return value;
}

function nodeAddress(value: string | undefined): string | null | undefined {
  return value === 'none' ? null : value;
}

function validNode(node: EdgeNode): EdgeNode {
  const errors = checkNode(node);
  if (errors.length > 0) throw new UsageError(errors.map((e) => `--${e.field}: ${e.message}`).join('\n'));
  return canonicalNode(node);
}

function limitsFrom(values: { 'max-domains'?: string; 'max-records'?: string; 'max-iplists'?: string; 'max-ips'?: string }): Partial<Limits> {
  const limits: Partial<Limits> = {};
  if (values['max-domains']) limits.max_domains = positiveInt(values['max-domains'], '--max-domains');
  if (values['max-records']) limits.max_records_per_domain = positiveInt(values['max-records'], '--max-records');
  if (values['max-iplists']) limits.max_iplists = positiveInt(values['max-iplists'], '--max-iplists');
  if (values['max-ips']) limits.max_ips_per_list = positiveInt(values['max-ips'], '--max-ips');
  return limits;
}

async function refuseDuplicateNodeName(store: Store, name: string, except?: number): Promise<void> {
  const other = (await store.listNodes()).find((n) => n.name === name && n.id !== except);
  if (other) throw new UsageError(`node ${other.id} is already named ${name}`);
}

/** Claims as the operator acts on them (events go to the accounts' webhooks like any). */
function ownershipFor(store: Store, config: Config | undefined): Ownership {
  const log = createLogger('silent');
  return new Ownership(store, config ?? loadConfig(), log, new Notifications(store, log).events);
}

function domainArg(text: string | undefined): string {
  const checked = normaliseDomainName(required(text, 'DOMAIN'));
  if (!checked.ok) throw new UsageError(`DOMAIN: ${checked.message}`);
  return checked.value;
}

export async function runAdmin(store: Store, argv: string[], out: Out, options: { secretKey?: Buffer; config?: Config } = {}): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [noun, verb, arg, arg2] = positionals;
  const command = `${noun ?? ''} ${verb ?? ''}`.trim();
  switch (command) {
    case 'user create': {
      const limits = limitsFrom(values);
      const email = required(values.email, 'email');
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError('--email must be an e-mail address');
      const taken = (await store.listUsers()).find((u) => u.email.toLowerCase() === email.toLowerCase());
      if (taken) throw new UsageError(`user ${taken.id} already has the e-mail address ${email}`);
      let user = await store.createUser({ name: required(values.name, 'name'), email, limits });
      if (values['reserved-zones']) user = await store.updateUser(user.id, { reservedZones: true });
      const apiKey = generateApiKey();
      const key = await store.addApiKey(user.id, hashApiKey(apiKey), 'initial');
      return out({ user, key: { id: key.id, api_key: apiKey, note: 'shown once; send it as the X-Auth-Key header' } });
    }
    case 'user reserved-zones': {
      const id = positiveInt(arg, 'ID');
      if (arg2 !== 'allow' && arg2 !== 'deny') throw new UsageError('say allow or deny after the user id');
      return out(await store.updateUser(id, { reservedZones: arg2 === 'allow' }));
    }
    case 'user limits': {
      const limits = limitsFrom(values);
      if (Object.keys(limits).length === 0) throw new UsageError('give at least one of --max-domains, --max-records, --max-iplists, --max-ips');
      return out(await store.updateUser(positiveInt(arg, 'ID'), { limits }));
    }
    case 'user disable':
    case 'user enable':
      return out(await store.updateUser(positiveInt(arg, 'ID'), { disabled: verb === 'disable' }));
    case 'user delete': {
      const id = positiveInt(arg, 'ID');
      if (!(await store.getUser(id))) throw new UsageError(`no user ${id}`);
      const removed = { domains: 0, iplists: 0 };
      if (values.force) {
        // One removal (and one change-feed entry) per domain and list, as if the user had done it.
        for (;;) {
          const page = await store.listZones(id, { limit: 500 });
          if (page.items.length === 0) break;
          for (const zone of page.items) {
            if (!(await store.deleteZone(zone.domain.domain, id))) continue;
            removed.domains++;
            // A proven domain's pair stays with the name (a later claim of another account gets another).
            await ownershipFor(store, options.config).forget(zone.domain);
          }
        }
        for (;;) {
          const page = await store.listIpLists(id, { limit: 500 });
          if (page.items.length === 0) break;
          for (const list of page.items) if (await store.deleteIpList(list.id, id)) removed.iplists++;
        }
      }
      await store.deleteUser(id);
      return out({ removed: id, ...removed });
    }
    case 'user list':
      return out(await store.listUsers());
    case 'key create': {
      const userId = positiveInt(values.user, '--user');
      const apiKey = generateApiKey();
      const key = await store.addApiKey(userId, hashApiKey(apiKey), values.label ?? '');
      return out({ id: key.id, user: userId, label: key.label, api_key: apiKey, note: 'shown once; send it as the X-Auth-Key header' });
    }
    case 'key list':
      return out((await store.listApiKeys(positiveInt(values.user, '--user'))).map(({ hash: _h, ...k }) => k));
    case 'key revoke': {
      const key = await store.revokeApiKey(positiveInt(arg, 'KEY_ID'));
      if (!key) throw new UsageError(`no key ${arg}`);
      return out({ id: key.id, user: key.userId, revoked: key.revoked });
    }
    case 'node add': {
      const node = validNode({
        id: 0,
        name: required(values.name, 'name'),
        ipv4: values.ipv4 ?? null,
        ipv6: values.ipv6 ?? null,
        location: required(values.location, 'location'),
        status: (values.status ?? 'active') as NodeStatus,
      });
      const { id: _id, ...fields } = node;
      await refuseDuplicateNodeName(store, node.name);
      return out(await store.createNode(fields));
    }
    case 'node update': {
      const id = positiveInt(arg, 'ID');
      const current = await store.getNode(id);
      if (!current) throw new UsageError(`no node ${id}`);
      const ipv4 = nodeAddress(values.ipv4);
      const ipv6 = nodeAddress(values.ipv6);
      const node = validNode({
        ...current,
        ...(values.name !== undefined && { name: values.name }),
        ...(ipv4 !== undefined && { ipv4 }),
        ...(ipv6 !== undefined && { ipv6 }),
        ...(values.location !== undefined && { location: values.location }),
        ...(values.status !== undefined && { status: values.status as NodeStatus }),
      });
      const { id: _id, ...fields } = node;
      await refuseDuplicateNodeName(store, node.name, id);
      return out(await store.updateNode(id, fields));
    }
    case 'node remove': {
      const id = positiveInt(arg, 'ID');
      if (!(await store.deleteNode(id))) throw new UsageError(`no node ${id}`);
      return out({ removed: id });
    }
    case 'node list':
      return out(await store.listNodes());
    case 'consumer add': {
      const url = values.url ?? null;
      if (url !== null && !/^https?:\/\/[^\s]+$/.test(url)) throw new UsageError('--url must be an http:// or https:// URL');
      const token = `nt_${randomBytes(32).toString('base64url')}`;
      const secret = randomBytes(32).toString('base64url');
      const node = values.node === undefined ? null : positiveInt(values.node, '--node');
      if (node !== null && !(await store.getNode(node))) throw new UsageError(`no node ${node}`);
      const consumer = await store.createConsumer({ name: required(values.name, 'name'), url, node, tokenHash: hashApiKey(token), secret });
      const who = node === null ? 'the name server' : `the edge of node ${node}`;
      return out({ id: consumer.id, name: consumer.name, url, node, token, secret, note: `shown once: ${who} needs both (Authorization: Bearer token; HMAC secret)` });
    }
    case 'consumer list':
      return out((await store.listConsumers()).map(({ tokenHash: _t, secret: _s, ...c }) => c));
    case 'cert put': {
      const domain = required(arg, 'DOMAIN').toLowerCase();
      const zone = await store.getZoneHead(domain);
      if (!zone) throw new UsageError(`no domain ${domain}`);
      const read = (flag: 'cert' | 'key'): string => {
        try {
          return readFileSync(required(values[flag], flag), 'utf8');
        } catch (error) {
          throw new UsageError(`--${flag}: ${(error as Error).message}`);
        }
      };
      let cert;
      try {
        cert = certificateFromPem(domain, read('cert'), read('key'));
      } catch (error) {
        if (error instanceof UsageError) throw error;
        throw new UsageError(`the certificate cannot be used: ${(error as Error).message}`);
      }
      // Edges show a domain's certificate for its names: it may name nothing of anyone else's.
      const fit = certificateFit(zone.domain, cert, Date.now());
      if (fit.refusals.length > 0) throw new UsageError(`the certificate cannot be stored for ${domain}: ${fit.refusals.join('; ')}`);
      if (!options.secretKey) throw new UsageError('PALISADE_SECRET_KEY is not set: private keys are stored sealed with the operator key (set it as for the API)');
      const stored = await store.putCertificate({ ...cert, key: new SecretBox(options.secretKey).seal(cert.key) });
      const warnings = [
        ...(fit.uncovered.length > 0 ? [`it does not cover ${fit.uncovered.join(', ')}: edges answer those names with their own certificate`] : []),
        ...(zone.domain.ssl ? [] : [`ssl is off for ${domain}: edges refuse HTTPS for its names until it is on`]),
      ];
      return out(warnings.length > 0 ? { ...certificateSummary(stored), warnings } : certificateSummary(stored));
    }
    case 'cert remove': {
      const domain = required(arg, 'DOMAIN').toLowerCase();
      if (!(await store.deleteCertificate(domain))) throw new UsageError(`no certificate for ${domain}`);
      return out({ removed: domain });
    }
    case 'cert list': {
      const all: unknown[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listCertificates({ limit: 500, cursor });
        all.push(...page.items.map(certificateSummary));
        cursor = page.next;
      } while (cursor);
      return out(all);
    }
    case 'domain claims': {
      const name = domainArg(arg);
      const ownership = ownershipFor(store, options.config);
      const claims = await store.listClaims(name);
      if (claims.length === 0) throw new UsageError(`no claim of ${name}`);
      return out(
        await Promise.all(
          claims.map(async ({ domain }, i) => ({
            user: domain.ownerId,
            holds_name: i === 0 && (await store.getZoneHead(name))?.domain.ownerId === domain.ownerId,
            nameservers: domain.claim?.nameservers ?? (options.config ?? loadConfig()).nameservers,
            ns_active: domain.ns_active,
            created: domain.created,
            verification: await ownership.verification(domain),
          })),
        ),
      );
    }
    case 'domain release': {
      const name = domainArg(arg);
      const user = positiveInt(values.user, '--user');
      const released = await ownershipFor(store, options.config).release(name, user, { by: 'operator', reason: `the operator released your claim of ${name}` });
      if (!released) throw new UsageError(`user ${user} has no claim of ${name}`);
      return out({ released: name, user, was: released.domain.claim?.verified === false ? 'pending' : 'verified' });
    }
    case 'domain prove': {
      const name = domainArg(arg);
      const user = positiveInt(values.user, '--user');
      if (!(await store.getZoneHead(name, user))) throw new UsageError(`user ${user} has no claim of ${name}`);
      const head = await ownershipFor(store, options.config).proveByOperator(name, user);
      return out({ proven: name, user, claim: head.domain.claim });
    }
    case 'zone import': {
      const name = domainArg(arg);
      const text = readFileSync(required(arg2, 'FILE'), 'utf8');
      const head = await store.getZoneHead(name);
      if (!head) throw new UsageError(`no domain ${name}`);
      const owner = await store.getUser(head.domain.ownerId);
      const outcome = await importZoneFile(store, name, head.domain.ownerId, text, { dryRun: values['dry-run'] === true, maxRecords: owner?.limits.max_records_per_domain ?? 1000, replaceAll: values['replace-all'] === true });
      return out({ ...outcome, added: outcome.added.length, changed: outcome.changed.length, removed: outcome.removed.length });
    }
    case 'secondary add': {
      const file = secondariesFile(options.config);
      const entry: SecondaryEntry = {
        name: required(values.name, 'name'),
        addresses: values.address ?? [],
        port: values.port === undefined ? 53 : positiveInt(values.port, '--port'),
        tsigKey: required(values['tsig-key'], 'tsig-key'),
        zones: (values.zone ?? []).map((z) => domainArg(z)),
        catalog: values['no-catalog'] !== true,
      };
      const problem = checkEntry(entry);
      if (problem) throw new UsageError(problem);
      const entries = readEntries(file);
      if (entries.some((e) => e.name === entry.name)) throw new UsageError(`a secondary named ${entry.name} exists; remove it first`);
      const sharing = keyNameTaken(entries, entry);
      if (sharing) throw new UsageError(`the TSIG key ${keyNameOf(entry)} is secondary ${sharing.name}'s; each secondary needs a key name of its own (its messages are known by it)`);
      writeEntries(file, [...entries, entry]);
      return out(shownSecondary(entry));
    }
    case 'secondary list':
      return out(readEntries(secondariesFile(options.config)).map(shownSecondary));
    case 'secondary remove': {
      const file = secondariesFile(options.config);
      const name = required(arg, 'NAME');
      const entries = readEntries(file);
      if (!entries.some((e) => e.name === name)) throw new UsageError(`no secondary named ${name}`);
      writeEntries(file, entries.filter((e) => e.name !== name));
      return out({ removed: name });
    }
    case 'consumer remove': {
      const id = positiveInt(arg, 'ID');
      if (!(await store.deleteConsumer(id))) throw new UsageError(`no consumer ${id}`);
      return out({ removed: id });
    }
    default:
      throw new UsageError(command === '' ? 'missing command' : `unknown command "${command}"`);
  }
}

/** Store rejections (unknown user, node still in use) read as usage problems at the shell. */
export function describeAdminError(error: unknown): string {
  // Each field at fault on its own line (a zone file's errors name their lines).
  if (error instanceof ApiError) return [error.message, ...error.errors.map((e) => `  ${e.field}: ${e.message}`)].join('\n');
  if (error instanceof StoreError || error instanceof UsageError) return error.message;
  if (error instanceof Error && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) return error.message;
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
