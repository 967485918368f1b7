// GET /nodes/: the edge nodes, registered by the operator (palisade admin node …).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EdgeNode } from '../../model/node.ts';
import { decodeIdCursor } from '../../store/cursor.ts';
import { linkNext, pageById, pageRequest } from '../paging.ts';
import { errorResponses, PageQuery, pagedList } from '../schemas.ts';

export const nodeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/nodes',
    {
      schema: {
        tags: ['nodes'],
        summary: 'List the edge nodes',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: pagedList(EdgeNode), ...errorResponses() },
      },
    },
    async (request, reply) => {
      const page = pageRequest(request.query);
      const after = page.cursor === undefined ? undefined : decodeIdCursor(page.cursor);
      return linkNext(request, reply, pageById(await app.store.listNodes(), page.limit, after));
    },
  );
};
