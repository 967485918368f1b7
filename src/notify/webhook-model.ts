// Webhooks: where a customer's events are POSTed, and the record of each delivery.
import { Type, type Static } from 'typebox';
import { EventJson, EventTypeSchema } from '../model/event.ts';
import { EXPECTED } from '../model/common.ts';

export const MAX_WEBHOOKS_PER_USER = 10;

export const WebhookCreate = Type.Object(
  {
    url: Type.String({ minLength: 8, maxLength: 2048, pattern: '^https?://', description: 'Where events are POSTed (http or https)', [EXPECTED]: 'an http:// or https:// URL, such as "https://hooks.example.com/palisade"' }),
    events: Type.Optional(Type.Array(EventTypeSchema, { maxItems: 32, uniqueItems: true, description: 'Event types sent; absent or empty: all' })),
    description: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type WebhookCreate = Static<typeof WebhookCreate>;

export const WebhookJson = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(EventTypeSchema),
  description: Type.String(),
  created: Type.String({ format: 'date-time' }),
});

export const WebhookCreated = Type.Object({
  ...WebhookJson.properties,
  secret: Type.String({ description: 'HMAC-SHA256 key of X-Palisade-Signature; shown only now' }),
});

export interface WebhookState extends Static<typeof WebhookJson> {
  owner: number;
  secret: string;
}

export const DeliveryAttempt = Type.Object({
  at: Type.String({ format: 'date-time' }),
  status: Type.Optional(Type.Integer({ description: 'HTTP status the receiver answered' })),
  error: Type.Optional(Type.String({ description: 'Why no answer came (refused, timed out, not a public address, …)' })),
  ms: Type.Integer(),
});

export const DeliveryJson = Type.Object({
  id: Type.String(),
  webhook: Type.String(),
  event: EventJson,
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  attempts: Type.Array(DeliveryAttempt),
  next_attempt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
export type DeliveryJson = Static<typeof DeliveryJson>;

export interface DeliveryState extends DeliveryJson {
  owner: number;
}
