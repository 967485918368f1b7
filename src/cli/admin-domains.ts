// Operator commands: claims of names (disputes settled by the operator) and zone-file imports. Each
// entry is one `palisade admin` command (see ADMIN_USAGE in admin.ts); it reads the parsed
// arguments and returns what is printed.
import { readFileSync } from 'node:fs';
import { loadConfig, type Config } from '../config.ts';
import type { Store } from '../store/types.ts';
import { createLogger } from '../log.ts';
import { Notifications } from '../notify/notifications.ts';
import { Ownership } from '../ownership/ownership.ts';
import { DnssecParent } from '../ownership/dnssec-parent.ts';
import { continueZoneRollover, RolloverRefused, startZoneRollover } from '../ownership/dnssec-rollover.ts';
import { SecretBox } from '../certs/secret-box.ts';
import { dsText, makeSigningKey } from '../model/dnssec-keys.ts';
import { importZoneFile } from '../zonefile/import.ts';
import { type AdminCommands, domainArg, positiveInt, required, UsageError } from './admin-args.ts';

/** Claims as the operator acts on them (events go to the accounts' webhooks like any). */
export function ownershipFor(store: Store, config: Config | undefined): Ownership {
  const log = createLogger('silent');
  return new Ownership(store, config ?? loadConfig(), log, new Notifications(store, log).events);
}

export const domainsCommands: AdminCommands = {
  'domain claims': async ({ store, arg, options }) => {
    const name = domainArg(arg);
    const ownership = ownershipFor(store, options.config);
    const claims = await store.listClaims(name);
    if (claims.length === 0) throw new UsageError(`no claim of ${name}`);
    return Promise.all(
      claims.map(async ({ domain }, i) => ({
        user: domain.ownerId,
        holds_name: i === 0 && (await store.getZoneHead(name))?.domain.ownerId === domain.ownerId,
        nameservers: domain.claim?.nameservers ?? (options.config ?? loadConfig()).nameservers,
        ns_active: domain.ns_active,
        created: domain.created,
        verification: await ownership.verification(domain),
      })),
    );
  },
  'domain release': async ({ store, values, arg, options }) => {
    const name = domainArg(arg);
    const user = positiveInt(values.user, '--user');
    const released = await ownershipFor(store, options.config).release(name, user, { by: 'operator', reason: `the operator released your claim of ${name}` });
    if (!released) throw new UsageError(`user ${user} has no claim of ${name}`);
    return { released: name, user, was: released.domain.claim?.verified === false ? 'pending' : 'verified' };
  },
  'domain prove': async ({ store, values, arg, options }) => {
    const name = domainArg(arg);
    const user = positiveInt(values.user, '--user');
    if (!(await store.getZoneHead(name, user))) throw new UsageError(`user ${user} has no claim of ${name}`);
    const head = await ownershipFor(store, options.config).proveByOperator(name, user);
    return { proven: name, user, claim: head.domain.claim };
  },
  'domain dnssec-off': async ({ store, arg, options }) => {
    // The end of a turning off the service cannot see through (no resolver to look at the parent):
    // the operator says the DS is gone from the parent (and its TTL over).
    const name = domainArg(arg);
    const head = await store.getZoneHead(name);
    if (!head) throw new UsageError(`no domain ${name}`);
    const ended = await new DnssecParent(store, options.config ?? loadConfig(), createLogger('silent')).endUnsigning(name, head.domain.ownerId, 'the operator ended the turning off');
    if (!ended) throw new UsageError(`${name} is not turning DNSSEC off (GET /domains/${name}/dnssec says its state)`);
    return { domain: name, dnssec: 'off' };
  },
  'domain dnssec-rollover': async ({ store, values, arg, options }) => {
    const name = domainArg(arg);
    const head = await store.getZoneHead(name);
    if (!head) throw new UsageError(`no domain ${name}`);
    const config = options.config ?? loadConfig();
    const parent = new DnssecParent(store, config, createLogger('silent'));
    const owner = head.domain.ownerId;
    try {
      if (values.continue === true) {
        // Past the parent, which the service cannot look at: the operator has checked it.
        const { ended } = await continueZoneRollover(store, name, owner, await parent.seen(name, owner), config.ownership.resolverCacheMaxSeconds);
        return { domain: name, ended, now: ended === 'publish' ? 'the new key signs; the old one retires (its DS may go from the parent)' : 'the old key is removed: the rollover is over' };
      }
      if (!options.secretKey) throw new UsageError('PALISADE_SECRET_KEY is not set: private keys are stored sealed with the operator key (set it as for the API)');
      const box = new SecretBox(options.secretKey);
      const key = await startZoneRollover(store, name, owner, (algorithm) => {
        const made = makeSigningKey(algorithm);
        return { ...made, private_key: box.seal(made.private_key) };
      });
      // Look at the parent now, and from then on as the monitor does.
      await parent.changed((await store.getZoneHead(name, owner))!.domain).catch(() => undefined);
      return { domain: name, rollover: 'publish', key_tag: key.key_tag, ds_to_add: dsText(name, key), next: `GET /domains/${name}/dnssec says what the rollover waits for` };
    } catch (error) {
      if (error instanceof RolloverRefused) throw new UsageError(`${name}: ${error.message}`);
      throw error;
    }
  },
  'zone import': async ({ store, values, arg, arg2 }) => {
    const name = domainArg(arg);
    const text = readFileSync(required(arg2, 'FILE'), 'utf8');
    const head = await store.getZoneHead(name);
    if (!head) throw new UsageError(`no domain ${name}`);
    const owner = await store.getUser(head.domain.ownerId);
    const outcome = await importZoneFile(store, name, head.domain.ownerId, text, { dryRun: values['dry-run'] === true, maxRecords: owner?.limits.max_records_per_domain ?? 1000, replaceAll: values['replace-all'] === true });
    return { ...outcome, added: outcome.added.length, changed: outcome.changed.length, removed: outcome.removed.length };
  },
};
