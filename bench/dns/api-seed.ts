// Loads the DNS workload's zones into a running `palisade serve` through its API, as customers
// do: a domain with a backend (the defaults otherwise: enabled, mask www), its records in one
// bulk change, then the name servers activated. A few requests in flight at a time.
import { recordsFor, zoneName } from './workload.ts';

async function call(base: string, key: string, method: string, path: string, body?: unknown): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.ok) return;
    if (res.status === 429 && attempt < 20) {
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`);
  }
}

/** Creates `zones` workload zones through the API at `base`, each with `backend` and the domain settings in `settings` (e.g. `{ dnssec: true }`). */
export async function seedThroughApi(base: string, key: string, zones: number, backend: string, inFlight = 8, settings: Record<string, unknown> = {}): Promise<void> {
  let next = 0;
  const one = async (i: number) => {
    const domain = zoneName(i);
    await call(base, key, 'POST', '/domains', { domain, backend, ...settings });
    await call(base, key, 'POST', `/domains/${domain}/dnsrecords/bulk`, { create: recordsFor(i) });
    await call(base, key, 'GET', `/domains/${domain}/activatens`);
  };
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < zones) await one(next++);
    }),
  );
}
