// Operator commands (`palisade admin`): the usage, the dispatch to each command (admin-*.ts, one
// file per kind of thing) and how errors read. Users, API keys and edge nodes straight on the store (the embedded store
// may be shared with a running server: LMDB serialises writers across processes).
import { parseArgs } from 'node:util';
import { ApiError } from '../errors.ts';
import { NODE_STATUSES } from '../model/node.ts';
import type { Store } from '../store/types.ts';
import type { Config } from '../config.ts';
import { StoreError } from '../store/errors.ts';
import { OPTIONS, UsageError, type AdminCommands } from './admin-args.ts';
import { certsCommands } from './admin-certs.ts';
import { domainsCommands } from './admin-domains.ts';
import { nodesCommands } from './admin-nodes.ts';
import { secondariesCommands } from './admin-secondaries.ts';
import { usersCommands } from './admin-users.ts';

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
  domain dnssec-off DOMAIN                 ends a domain's turning DNSSEC off (state unsigning) when the parent
                                           cannot be looked at: its name servers stop signing. Only once the DS
                                           is gone from the parent and its TTL over
  domain dnssec-rollover DOMAIN [--continue]
                                           starts a rollover of the domain's signing key (same algorithm): a new
                                           key published, its DS to add at the registrar; the monitor moves it on
                                           as the parent's DS and the TTLs allow. --continue: the next phase when
                                           the parent cannot be looked at (refused before the TTLs are over)
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

export { UsageError } from './admin-args.ts';

const COMMANDS: AdminCommands = { ...usersCommands, ...nodesCommands, ...certsCommands, ...domainsCommands, ...secondariesCommands };

export async function runAdmin(store: Store, argv: string[], out: Out, options: { secretKey?: Buffer; config?: Config } = {}): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [noun, verb, arg, arg2] = positionals;
  const command = `${noun ?? ''} ${verb ?? ''}`.trim();
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!run) throw new UsageError(command === '' ? 'missing command' : `unknown command "${command}"`);
  out(await run({ store, values, verb, arg, arg2, options }));
}

type Out = (value: unknown) => void;

/** Store rejections (unknown user, node still in use) read as usage problems at the shell. */
export function describeAdminError(error: unknown): string {
  // Each field at fault on its own line (a zone file's errors name their lines).
  if (error instanceof ApiError) return [error.message, ...error.errors.map((e) => `  ${e.field}: ${e.message}`)].join('\n');
  if (error instanceof StoreError || error instanceof UsageError) return error.message;
  if (error instanceof Error && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS')) return error.message;
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
