// A key rollover as GET /domains/{domain}/dnssec shows it (model/dnssec-rollover.ts): its phase,
// what it waits for, the DS to add and to remove at the registrar, and what to do next in words.
import { Type } from 'typebox';
import type { RolloverProgress } from './dnssec-rollover.ts';

export const RolloverView = Type.Object({
  phase: Type.Union([Type.Literal('publish'), Type.Literal('retire')], {
    description:
      '`publish`: the new key is in the DNSKEY set, signing nothing, until the parent holds its DS (and resolvers\' caches have caught up); `retire`: the new key signs, the old one stays in the DNSKEY set, signing nothing, until its DS is gone from the parent and no cached answer needs it',
  }),
  phase_since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the phase began (the waits on cached TTLs count from then)' }),
  waiting_for: Type.Array(Type.String(), { description: 'What the phase still waits for, in words; empty: it ends at the next look' }),
  ds_to_add: Type.Array(Type.String(), { description: 'DS records to add at the registrar (the new key\'s), beside the ones there' }),
  ds_to_remove: Type.Array(Type.String(), { description: 'DS records to remove at the registrar (the old key\'s), keeping the new one' }),
});

const CONTINUE = '`palisade admin domain dnssec-rollover DOMAIN --continue`';

/** What the customer (or, without a resolver, the operator) does next while a rollover runs. */
export function rolloverStep(progress: RolloverProgress | undefined, canLook: boolean): string {
  if (!progress) return 'A key rollover is under way.';
  const left = progress.waiting.length > 0 ? ` Waiting for: ${progress.waiting.join('; ')}.` : '';
  if (progress.phase === 'publish') {
    // The old DS removed too soon: nothing the parent holds matches the key that signs now.
    if (progress.activeDsHeld === false) {
      return `The parent holds no DS of the key that signs now: validating resolvers fail the domain. Put the current key's DS back at your registrar, beside the new one (ds_to_add), and remove it only once this asks you to.${left}`;
    }
    if (progress.parentReady) return `A key rollover is under way: the parent holds the new key's DS. The new key begins signing once resolvers' caches have caught up; nothing to do.${left}`;
    return canLook
      ? `A key rollover is under way: add the new key's DS (ds_to_add) at your registrar, beside the current one, which stays (parents that scan take it from our CDS/CDNSKEY records). The new key begins signing once the parent holds its DS and resolvers' caches have caught up.${left}`
      : `A key rollover is under way: add the new key's DS (ds_to_add) at your registrar, beside the current one. This service cannot look at parent zones (no resolver configured): once the DS is at the parent and its TTL over, its operator continues the rollover (${CONTINUE}).${left}`;
  }
  if (progress.parentReady) return `A key rollover is under way: the new key signs and the old DS is gone from the parent. The old key leaves the DNSKEY set once no cached answer needs it; nothing to do.${left}`;
  return canLook
    ? `A key rollover is under way: the new key signs. Remove the old key's DS (ds_to_remove) at your registrar and keep the new one (parents that scan see it gone from our CDS/CDNSKEY records); the old key leaves the DNSKEY set once its DS is gone and resolvers' caches have caught up.${left}`
    : `A key rollover is under way: the new key signs. Remove the old key's DS (ds_to_remove) at your registrar and keep the new one. This service cannot look at parent zones (no resolver configured): once the old DS is gone from the parent and its TTL over, its operator ends the rollover (${CONTINUE}).${left}`;
}
