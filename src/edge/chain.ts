// The edge chain: every stage a connection and a request go through, in order, each with the
// phase it joins (Pingora's: connection → request head → body → upstream → response → logging).
// Ordering is the design: read this list to know what runs before what. A stage of the walk answers
// the request (its outcome ends the walk) or passes it on; response filters join the backend's
// response as it streams; logging stages see every request. ChainRunner (stage/run.ts) refuses a
// list whose phases are out of order. How to add a stage: ../../docs/architecture.md.
import type { EdgeParts } from './stage/parts.ts';
import type { ChainEntry } from './stage/stage.ts';
import { connectionLimitStage } from './protect/connection-stage.ts';
import { acmePingStage, acmeTokenStage, bodyBoundStage, forceHttpsStage, routeStage, statusPageStage, targetStage, unservedStage } from './request/head-stages.ts';
import { frontingStage } from './tls/fronting-stage.ts';
import { addressStage } from './protect/address-stage.ts';
import { bodyBufferStage, bodyInspectionStage, clientLimitStage, headInspectionStage, tailVerdictStage } from './waf/stages.ts';
import { bodyPaceStage } from './protect/body-pace-stage.ts';
import { challengeStage } from './protect/challenge-stage.ts';
import { cacheFillStage, cacheLockReturnStage, cacheLookupStage } from './cache/stage.ts';
import { backendStage, gatewayStage, proxyStage, upgradeStage, upstreamFiguresStage } from './upstream-stages.ts';
import { backendShareReturnStage, backendShareStage } from './protect/backend-share-stage.ts';
import { bandwidthStage } from './protect/bandwidth-stage.ts';
import { accessLogStage, requestMetricsStage } from './log-stages.ts';

export function edgeChain(parts: EdgeParts): ChainEntry[] {
  return [
    // connection: before any byte is read
    connectionLimitStage(parts), //           protect/  connections per client network and in all
    // request head: what the head alone decides
    targetStage(), //                         request/  Host and target read once; malformed → 400
    statusPageStage(parts), //                request/  no Host: the node's status page
    routeStage(parts), //                     request/  Host → route (answers nothing)
    frontingStage(parts), //                  tls/      Host of another domain than the SNI → 421
    acmePingStage(), //                       request/  ACME ping → pong, before any protection
    unservedStage(), //                       request/  unknown, disabled, unbound → 421
    addressStage(parts), //                   protect/  IP lists, then the country rule → 403
    acmeTokenStage(parts), //                 request/  HTTP-01 token → the token or 404; past the IP lists only
    forceHttpsStage(parts), //                request/  fhttps → 301/308
    bodyBoundStage(parts), //                 request/  announced body past the bound → 413
    clientLimitStage(parts), //               waf/      client rate and ban → 429/403
    bodyBufferStage(parts), //                waf/      body buffer budget → 429/503, before a byte is read
    headInspectionStage(parts), //            waf/      protocol checks, the head's rules → 400/403
    // body: the body's deadline (armed as the request starts), its inspection
    bodyPaceStage(parts), //                  protect/  body past its deadline → 408
    bodyInspectionStage(parts), //            waf/      the body read and its rules → 403/413/415
    challengeStage(parts), //                 protect/  JS challenge → 503 (after the WAF's verdict)
    // upstream: answered from the cache, or carried to the backend
    cacheLookupStage(parts), //               cache/    HIT, or MISS/EXPIRED with the fill lock
    backendStage(parts), //                   ./        backend or failover; an upgrade without one → 502
    backendShareStage(parts), //              protect/  client's (account's) share of the backend → 429
    upgradeStage(parts), //                   ./        WebSocket handshake → upgrade.ts
    proxyStage(parts), //                     ./        proxy.ts → backend or failover
    // response: as the backend's answer streams, then what it came to
    cacheFillStage(parts), //                 cache/    X-Cache; the fill when the answer may be stored
    bandwidthStage(parts), //                 protect/  bwlimit: the body paced by the domain's bucket
    backendShareReturnStage(), //             protect/  the share given back
    cacheLockReturnStage(), //                cache/    the fill lock given back when nothing is stored
    upstreamFiguresStage(parts), //           ./        /metrics, uptime; a client gone → 499
    tailVerdictStage(parts), //               waf/      the tail watch's verdict → 403/413/415
    gatewayStage(parts), //                   ./        the backend's answer, or 502/504/413
    // logging
    requestMetricsStage(parts), //            ./        requests by status and cache
    accessLogStage(parts), //                 ./        the access log line
  ];
}
