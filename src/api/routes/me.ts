// GET /me: the calling user, its limits and what it uses of them.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Me } from '../../model/user.ts';
import { errorResponses } from '../schemas.ts';

export const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/me', { schema: { tags: ['account'], summary: 'The calling user', response: { 200: Me, ...errorResponses() } } }, async (request) => {
    const { id, name, email, created, limits } = request.user;
    const [domains, iplists] = await Promise.all([app.store.countZones(id), app.store.countIpLists(id)]);
    return { id, name, email, created, limits, usage: { domains, iplists }, nameservers: [...app.ownership.accountPair(request.user)] };
  });
};
