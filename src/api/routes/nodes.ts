// GET /nodes/: the edge nodes, registered by the operator (palisade admin node …).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EdgeNode } from '../../model/node.ts';
import { errorResponses } from '../schemas.ts';

export const nodeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/nodes',
    { schema: { tags: ['nodes'], summary: 'List the edge nodes', response: { 200: Type.Array(EdgeNode), ...errorResponses() } } },
    async () => app.store.listNodes(),
  );
};
