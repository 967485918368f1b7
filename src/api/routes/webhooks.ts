// The customer's events and where they are sent:
//   GET    /me/events                           events, newest first (paged)
//   POST   /me/webhooks                         register a receiver (its signing secret is shown once)
//   GET    /me/webhooks, /me/webhooks/{id}      list, read
//   DELETE /me/webhooks/{id}                    remove (its queued deliveries go with it)
//   POST   /me/webhooks/{id}/test               send a webhook.test event now
//   GET    /me/webhooks/{id}/deliveries         the delivery log, newest first (paged), each attempt with its answer
// Deliveries themselves are made by ../../notify/delivery-worker.ts.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TypeBoxApp } from '../typebox-app.ts';
import { randomBytes } from 'node:crypto';
import { Type } from 'typebox';
import { notFound, unprocessable } from '../../errors.ts';
import { EventJson, newestFirstKey } from '../../model/event.ts';
import { DeliveryJson, WebhookCreate, WebhookCreated, WebhookJson, type DeliveryState, type WebhookState } from '../../notify/webhook-model.ts';
import { resolveReceiver } from '../../notify/webhook-sender.ts';
import type { Notifications } from '../../notify/notifications.ts';
import { linkNext, pageRequest } from '../paging.ts';
import { errorResponses, PageQuery, pagedList } from '../schemas.ts';

const HookParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

const renderHook = ({ owner: _owner, secret: _secret, ...hook }: WebhookState) => hook;
const renderDelivery = ({ owner: _owner, ...delivery }: DeliveryState) => delivery;

/** A webhook of the account's (404 when it has none of that id). */
async function ownHook(webhooks: Notifications['webhooks'], owner: number, id: string): Promise<WebhookState> {
  const hook = await webhooks.get(owner, id);
  if (!hook) throw notFound(`webhook ${id}`);
  return hook;
}

const tags = ['notifications'];

export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  eventList(app);
  webhookRegistry(app);
  webhookDeliveries(app);
};

/** GET /me/events: your events, newest first. */
function eventList(app: TypeBoxApp): void {
  app.get(
    '/me/events',
    {
      schema: {
        tags,
        summary: 'List your events',
        description: 'Backend down and recovered, failover engaged and released, flapping, certificate failures and expiry, domains served by no node, delegation missing — newest first. An account keeps its newest 1,000.',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: pagedList(EventJson), ...errorResponses() },
      },
    },
    async (request, reply) => linkNext(request, reply, await app.notify.events.list(request.user.id, pageRequest(request.query))).map((i) => i.value),
  );
}

/** Registering, listing, reading and deleting webhooks. */
function webhookRegistry(app: TypeBoxApp): void {
  const { webhooks } = app.notify;
  app.post(
    '/me/webhooks',
    {
      schema: {
        tags,
        summary: 'Register a webhook',
        description:
          'Events are POSTed as JSON with `X-Palisade-Event`, `X-Palisade-Delivery`, `X-Palisade-Timestamp` and `X-Palisade-Signature: sha256=HEX`, the HMAC-SHA256 of `TIMESTAMP.BODY` under the secret returned here (once). A 2xx answer within 5 s delivers; otherwise the delivery is tried again with growing delays. Receivers must be at public addresses. At most 10 per account.',
        body: WebhookCreate,
        response: { 201: WebhookCreated, ...errorResponses(422) },
      },
    },
    async (request, reply) => {
      const url = new URL(request.body.url);
      const checked = await resolveReceiver(url.hostname, app.config.notify.allowPrivate);
      if ('error' in checked && checked.error.includes('public addresses only')) throw unprocessable([{ field: 'url', message: checked.error }]);
      const hook = await webhooks.create(request.user.id, request.body);
      const { owner: _owner, ...created } = hook;
      return reply.code(201).header('location', `/me/webhooks/${hook.id}`).send(created);
    },
  );

  app.get('/me/webhooks', { schema: { tags, summary: 'List your webhooks', response: { 200: Type.Array(WebhookJson), ...errorResponses() } } }, async (request) =>
    (await webhooks.list(request.user.id)).map(renderHook),
  );

  app.get('/me/webhooks/:id', { schema: { tags, summary: 'Read a webhook', params: HookParams, response: { 200: WebhookJson, ...errorResponses(404) } } }, async (request) =>
    renderHook(await ownHook(webhooks, request.user.id, request.params.id)),
  );

  app.delete('/me/webhooks/:id', { schema: { tags, summary: 'Delete a webhook', params: HookParams, response: { 204: Type.Null(), ...errorResponses(404) } } }, async (request, reply) => {
    if (!(await webhooks.delete(request.user.id, request.params.id))) throw notFound(`webhook ${request.params.id}`);
    return reply.code(204).send(null);
  });
}

/** A test event sent to one webhook, and its delivery log. */
function webhookDeliveries(app: TypeBoxApp): void {
  const { webhooks } = app.notify;
  app.post(
    '/me/webhooks/:id/test',
    {
      schema: { tags, summary: 'Send a test event', description: 'A `webhook.test` event to this webhook only; the answer is its delivery, whose log shows the attempts.', params: HookParams, response: { 202: DeliveryJson, ...errorResponses(404) } },
    },
    async (request, reply) => {
      const hook = await ownHook(webhooks, request.user.id, request.params.id);
      const now = Date.now();
      const event = { id: `evt_${newestFirstKey(now, randomBytes(4).toString('hex'))}`, type: 'webhook.test' as const, domain: null, created: new Date(now).toISOString(), data: { webhook: hook.id } };
      const [delivery] = await webhooks.enqueue(request.user.id, event, hook);
      return reply.code(202).header('location', `/me/webhooks/${hook.id}/deliveries`).send(renderDelivery(delivery!));
    },
  );

  app.get(
    '/me/webhooks/:id/deliveries',
    {
      schema: {
        tags,
        summary: 'Read a webhook\'s delivery log',
        description: 'Newest first; the newest 100 are kept. Each attempt with the receiver\'s status or why it had none, and when the next is due.',
        params: HookParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: pagedList(DeliveryJson), ...errorResponses(404) },
      },
    },
    async (request, reply) => {
      const hook = await ownHook(webhooks, request.user.id, request.params.id);
      return linkNext(request, reply, await webhooks.deliveries(hook.id, pageRequest(request.query))).map((i) => renderDelivery(i.value));
    },
  );
}
