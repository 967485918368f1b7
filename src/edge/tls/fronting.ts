// Domain fronting: a TLS connection opened for one domain (its SNI, which chose the certificate)
// must not carry requests for another (its Host). Otherwise a client shows one tenant's name to
// anyone watching the handshake and reaches another tenant's site, and one tenant's certificate
// lends its name to another's traffic. Such a request gets 421 (RFC 9110 §15.5.20: "not able to
// produce a response for this combination of scheme and authority on this connection"), which
// tells a client to retry on a new connection. Names that route to the same domain (SNI
// www.example.org, Host example.org) are the same site. A handshake without SNI (a client that
// dialled an IP address) names no site, so it may carry no customer's request either; the node's
// status page (Host an IP address) is answered before this check. Pure but for reading the socket.
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { hostName, type Route, type RoutingTable } from '../routing.ts';

/**
 * Whether a request that `hostRoute` sends to a domain names, over TLS, another domain than its
 * handshake did: `servername` is the SNI (false, null or undefined when the client sent none).
 */
export function frontedRequest(routes: Pick<RoutingTable, 'route'>, servername: string | false | null | undefined, hostRoute: Route): boolean {
  // Requests for no domain are answered with the edge's own 421 pages (or the ping) anyway.
  if (hostRoute.kind !== 'domain') return false;
  const sni = hostName(servername || undefined);
  if (!sni) return true;
  const sniRoute = routes.route(sni);
  return sniRoute.kind !== 'domain' || sniRoute.domain.domain !== hostRoute.domain.domain;
}

/** The text of the 421 answer: says what to do, names neither domain. */
const FRONTING_REFUSAL = 'Misdirected request: this connection was opened (TLS SNI) for another site than the one this request names. Open a new connection for it.\n';

/** For the listeners: the 421 text when a request on `socket` is fronted, undefined otherwise (plain HTTP included). */
export function frontingRefusal(routes: Pick<RoutingTable, 'route'>, socket: Socket, hostRoute: Route): string | undefined {
  if (!(socket instanceof TLSSocket)) return undefined;
  return frontedRequest(routes, socket.servername, hostRoute) ? FRONTING_REFUSAL : undefined;
}
