// OpenAPI 3.1 generated from the route schemas, served at /openapi.json, with a browsable
// page at /docs.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export const openapiPlugin = fp(
  async (app: FastifyInstance) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Palisade control-plane API',
          version: '1.0.0',
          description:
            'Domains, DNS records, name-server activation, IP lists and edge nodes. Every request except /healthz, /readyz, /openapi.json and /docs needs an `X-Auth-Key` header. Errors are RFC 9457 problem+json documents. Lists are paged with `limit` and `cursor`; a `Link: <…>; rel="next"` header gives the next page.',
          license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
        },
        servers: [{ url: '/', description: 'This API (the host serving this document)' }],
        components: {
          securitySchemes: {
            apiKey: { type: 'apiKey', in: 'header', name: 'X-Auth-Key' },
            consumerToken: { type: 'http', scheme: 'bearer', description: 'A change-feed consumer token from `palisade admin consumer add` (a name server, or with --node an edge)' },
          },
        },
        security: [{ apiKey: [] }],
      },
    });
    await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'palisade-openapi' },
);
