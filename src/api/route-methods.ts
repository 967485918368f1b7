// Which methods each route path answers, for 405 Method Not Allowed with an Allow header. Paths
// are matched segment by segment (":param" matches any one segment); a list of a few dozen
// routes, read only for requests that matched no route.
export class RouteMethods {
  private readonly routes: Array<{ segments: string[]; methods: Set<string> }> = [];

  add(url: string, method: string | string[]): void {
    const segments = url.replace(/\/+$/, '').split('/');
    let route = this.routes.find((r) => r.segments.join('/') === segments.join('/'));
    if (!route) this.routes.push((route = { segments, methods: new Set() }));
    for (const m of Array.isArray(method) ? method : [method]) route.methods.add(m);
  }

  /** The methods routes matching `path` answer, sorted; empty when no route matches it. */
  allowed(path: string): string[] {
    const segments = path.replace(/\/+$/, '').split('/');
    const methods = new Set<string>();
    for (const route of this.routes) {
      if (route.segments.length !== segments.length) continue;
      if (route.segments.every((s, i) => s.startsWith(':') ? segments[i] !== '' : s === segments[i])) for (const m of route.methods) methods.add(m);
    }
    return [...methods].sort();
  }
}

/** An OpenAPI operationId from a method and path: GET /domains/:domain/dnsrecords → getDomainsByDomainDnsrecords. */
export function operationId(method: string, url: string): string {
  const words = url
    .split('/')
    .filter((s) => s !== '')
    .map((s) => (s.startsWith(':') ? `By${s[1]!.toUpperCase()}${s.slice(2)}` : s.replace(/[^a-zA-Z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? '').toUpperCase())))
    .map((s) => s[0]!.toUpperCase() + s.slice(1));
  return method.toLowerCase() + words.join('');
}
