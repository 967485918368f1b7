// Authentication of change-feed consumers by their bearer token (never a customer key). A
// consumer registered for a node is an edge and may read only the edge feed; one without is a
// name server and may read only the name servers' feed.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.ts';
import { hashApiKey } from '../../model/user.ts';
import type { ConsumerState, Store } from '../../store/types.ts';

declare module 'fastify' {
  interface FastifyRequest {
    consumer?: ConsumerState;
  }
}

export function consumerAuth(store: Store, role: 'edge' | 'nameserver'): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    const header = request.headers.authorization ?? '';
    const token = /^Bearer ([\x21-\x7e]{8,256})$/.exec(header)?.[1];
    if (!token) throw new ApiError('UNAUTHORIZED', 'send a consumer token as "Authorization: Bearer …"');
    const hash = hashApiKey(token);
    const consumer = await store.findConsumerByTokenHash(hash);
    if (!consumer || !timingSafeEqual(Buffer.from(consumer.tokenHash, 'hex'), Buffer.from(hash, 'hex'))) {
      throw new ApiError('UNAUTHORIZED', 'the consumer token is not valid');
    }
    const isEdge = typeof consumer.node === 'number';
    if (role === 'edge' && !isEdge) throw new ApiError('FORBIDDEN', 'this consumer is a name server; the edge feed is for consumers registered with --node');
    if (role === 'nameserver' && isEdge) throw new ApiError('FORBIDDEN', `this consumer is the edge of node ${consumer.node}; it may read only /sync/edge/*`);
    request.consumer = consumer;
  };
}
