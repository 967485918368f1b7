// Operator commands: users and their API keys. Each entry is one `palisade admin` command (see
// ADMIN_USAGE in admin.ts); it reads the parsed arguments and returns what is printed.
import { generateApiKey, hashApiKey } from '../model/user.ts';
import { type AdminCommands, limitsFrom, positiveInt, required, UsageError } from './admin-args.ts';
import { ownershipFor } from './admin-domains.ts';

export const usersCommands: AdminCommands = {
  'user create': async ({ store, values }) => {
    const limits = limitsFrom(values);
    const email = required(values.email, 'email');
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError('--email must be an e-mail address');
    const taken = (await store.listUsers()).find((u) => u.email.toLowerCase() === email.toLowerCase());
    if (taken) throw new UsageError(`user ${taken.id} already has the e-mail address ${email}`);
    let user = await store.createUser({ name: required(values.name, 'name'), email, limits });
    if (values['reserved-zones']) user = await store.updateUser(user.id, { reservedZones: true });
    const apiKey = generateApiKey();
    const key = await store.addApiKey(user.id, hashApiKey(apiKey), 'initial');
    return { user, key: { id: key.id, api_key: apiKey, note: 'shown once; send it as the X-Auth-Key header' } };
  },
  'user reserved-zones': async ({ store, arg, arg2 }) => {
    const id = positiveInt(arg, 'ID');
    if (arg2 !== 'allow' && arg2 !== 'deny') throw new UsageError('say allow or deny after the user id');
    return await store.updateUser(id, { reservedZones: arg2 === 'allow' });
  },
  'user limits': async ({ store, values, arg }) => {
    const limits = limitsFrom(values);
    if (Object.keys(limits).length === 0) throw new UsageError('give at least one of --max-domains, --max-records, --max-iplists, --max-ips');
    return await store.updateUser(positiveInt(arg, 'ID'), { limits });
  },
  'user disable': async ({ store, verb, arg }) => {
    return await store.updateUser(positiveInt(arg, 'ID'), { disabled: verb === 'disable' });
  },
  'user enable': (ctx) => usersCommands['user disable']!(ctx),
  'user delete': async ({ store, values, arg, options }) => {
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
    return { removed: id, ...removed };
  },
  'user list': async ({ store }) => {
    return await store.listUsers();
  },
  'key create': async ({ store, values }) => {
    const userId = positiveInt(values.user, '--user');
    const apiKey = generateApiKey();
    const key = await store.addApiKey(userId, hashApiKey(apiKey), values.label ?? '');
    return { id: key.id, user: userId, label: key.label, api_key: apiKey, note: 'shown once; send it as the X-Auth-Key header' };
  },
  'key list': async ({ store, values }) => {
    return (await store.listApiKeys(positiveInt(values.user, '--user'))).map(({ hash: _h, ...k }) => k);
  },
  'key revoke': async ({ store, arg }) => {
    const key = await store.revokeApiKey(positiveInt(arg, 'KEY_ID'));
    if (!key) throw new UsageError(`no key ${arg}`);
    return { id: key.id, user: key.userId, revoked: key.revoked };
  },
};
