// The events a customer hears of, as their webhooks receive them and GET /me/events lists them.
import { Type, type Static } from 'typebox';

export const EVENT_TYPES = [
  'backend.down',
  'backend.recovered',
  'failover.engaged',
  'failover.released',
  'backend.flapping',
  'certificate.failed',
  'certificate.expiring',
  'domain.unserved',
  'domain.served',
  'delegation.missing',
  'delegation.ok',
  'domain.verified',
  'domain.claim_released',
  'domain.verification_lost',
  'domain.claim_shared',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const EventTypeSchema = Type.Unsafe<EventType>({ type: 'string', enum: [...EVENT_TYPES] });

export const EventJson = Type.Object({
  id: Type.String({ description: 'Unique; newer events sort first' }),
  type: EventTypeSchema,
  domain: Type.Union([Type.String(), Type.Null()]),
  created: Type.String({ format: 'date-time' }),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'Details by type: the state, the nodes that see it, the certificate, the reason' }),
});
export type EventJson = Static<typeof EventJson>;

/** `created` ms → an id that sorts newest first (a store lists ids in ascending order). */
export function newestFirstKey(ms: number, unique: string): string {
  return `${String(9_999_999_999_999 - ms).padStart(13, '0')}${unique}`;
}

/**
 * Where a part that raises customer events hands them (the notify folder's EventBook is one):
 * the parts below notify (uptime, ownership, certificates) take one, so none imports notify.
 */
export interface EventSink {
  emit(owner: number, type: EventType, domain: string | null, data: Record<string, unknown>): Promise<unknown>;
}
