// Liveness and readiness, outside authentication so load balancers and orchestrators can probe.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { problemResponse } from '../schemas.ts';

const Health = Type.Object({ status: Type.String(), revision: Type.Integer(), store: Type.String() });

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const check = async () => ({ status: 'ok', revision: await app.store.currentRevision(), store: app.store.kind });
  const schema = { tags: ['health'], security: [], response: { 200: Health, 400: problemResponse(400), 503: problemResponse(503) } };
  app.get('/healthz', { schema: { ...schema, summary: 'Liveness: the process answers' } }, check);
  app.get('/readyz', { schema: { ...schema, summary: 'Readiness: the store answers' } }, check);
};
