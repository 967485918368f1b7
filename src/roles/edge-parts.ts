// What the serve and edge roles build alike: the edge server from the config, listening on its
// HTTP and HTTPS ports (a port that cannot be had is one clear start-up line).
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { EdgeServer, type EdgeServerOptions } from '../edge/edge-server.ts';
import { DEFAULT_CONNECTION_LIMITS } from '../edge/protect/connection-limits.ts';
import { DEFAULT_BODY_BUFFER } from '../edge/protect/body-buffer-budget.ts';
import type { EdgeState } from '../edge/edge-state.ts';
import type { GeoLocator } from '../geo/locator.ts';
import { StartupError } from './startup-error.ts';

/** The disk cache's bound (large files; with workers, every entry). */
export const CACHE_DISK_BYTES = 4096 * 1_048_576;

/** `overrides`: what an edge role's worker sets otherwise (its part of the node's bounds, the shared cache, …). */
export function newEdgeServer(config: Config, state: EdgeState, log: Logger, geo: GeoLocator | undefined, overrides: Partial<EdgeServerOptions> = {}): EdgeServer {
  const { edge } = config;
  return new EdgeServer(state, {
    nodeName: edge.nodeName,
    locate: geo && ((address: string) => geo.locate(address)),
    trustedProxies: edge.trustedProxies,
    clientLimits: edge.clientLimits,
    // Unset: a random key per process (clearances then hold on this edge until it restarts;
    // edges that should honour each other's must share one).
    challenge: { difficulty: edge.challenge.difficulty, cookieMinutes: edge.challenge.cookieMinutes, secret: edge.challenge.secret ?? randomBytes(32) },
    connectTimeoutMs: edge.connectTimeoutMs,
    responseTimeoutMs: edge.responseTimeoutMs,
    checkIntervalMs: edge.checkIntervalMs,
    maxBodyBytes: edge.maxBodyBytes,
    clientTimeoutMs: edge.clientTimeoutMs,
    cache: { memoryBytes: edge.cacheMemoryBytes, diskBytes: CACHE_DISK_BYTES, dir: edge.cacheDir },
    allowPrivateBackends: config.allowPrivateBackends,
    // The reserve (connections kept for clients holding few) is a sixteenth of the whole.
    connections: { ...DEFAULT_CONNECTION_LIMITS, max: edge.maxConnections, perClient: edge.maxConnectionsPerClient, reserve: Math.floor(edge.maxConnections / 16) },
    bodyPace: { graceMs: edge.bodyGraceMs, minRate: edge.bodyMinRate, maxMs: edge.bodyMaxMs },
    backendSharePerClient: edge.backendSharePerClient,
    backendSharePerAccount: edge.backendSharePerAccount,
    bodyBuffer: { ...DEFAULT_BODY_BUFFER, nodeBytes: edge.bodyBufferBytes, perClientBytes: edge.bodyBufferPerClientBytes },
    upgradeIdleMs: edge.upgradeIdleMs,
    log,
    ...overrides,
  });
}

export async function listenEdge(config: Config, server: EdgeServer): Promise<{ http: string; https: string }> {
  const { host, httpPort, httpsPort } = config.edge;
  const ports = await server.listen(host, httpPort, httpsPort).catch((error: Error) => {
    throw new StartupError(`edge: ${error.message}; free the port or set PALISADE_EDGE_HOST/PALISADE_EDGE_HTTP_PORT/PALISADE_EDGE_HTTPS_PORT`);
  });
  const shown = host.includes(':') ? `[${host}]` : host;
  return { http: `http://${shown}:${ports.http}`, https: `https://${shown}:${ports.https}` };
}
