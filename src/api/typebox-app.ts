// The app as a routes plugin receives it (schemas typed by TypeBox), for the named functions a
// plugin hands it to: one per route or per group of routes.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

export type TypeBoxApp = Parameters<FastifyPluginAsyncTypebox>[0];
