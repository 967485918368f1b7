// Every call of the console goes through the public API with the customer's key, so the console
// can do nothing the API does not let that key do. Errors arrive as the API's problem+json.
import { storedKey } from './session.ts';

export interface FieldError {
  field: string;
  message: string;
}

export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly errors: FieldError[] = [],
  ) {
    super(detail);
  }

  /** The message for a field of a form ("ttl", or "ips.3" for `ips`), if the API named it. */
  fieldMessage(field: string): string | undefined {
    const found = this.errors.filter((e) => e.field === field || e.field.startsWith(`${field}.`) || e.field.startsWith(`${field}[`));
    return found.length ? found.map((e) => e.message).join('; ') : undefined;
  }
}

/** A page of a list and the path of the next page (from the `Link: <…>; rel="next"` header). */
export interface Page<T> {
  items: T[];
  next: string | null;
}

/** Told when the key stops working (revoked while signed in): the console signs out. */
let onUnauthorized: () => void = () => undefined;
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

/** A body that is not JSON: its text and media type (a zone file is text/dns). */
export class TextBody {
  constructor(
    readonly text: string,
    readonly type: string,
  ) {}
}

async function send(method: string, path: string, body?: unknown, key = storedKey()): Promise<Response> {
  if (!key) throw new Problem(401, 'UNAUTHORIZED', 'signed out');
  const headers: Record<string, string> = { 'x-auth-key': key, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = body instanceof TextBody ? body.type : 'application/json';
  const payload = body === undefined ? undefined : body instanceof TextBody ? body.text : JSON.stringify(body);
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: payload, cache: 'no-store', credentials: 'omit' });
  } catch {
    throw new Problem(0, 'NETWORK', 'the service could not be reached; check your connection and try again');
  }
  if (response.ok) return response;
  let problem: { code?: string; detail?: string; title?: string; errors?: FieldError[] } = {};
  try {
    problem = (await response.json()) as typeof problem;
  } catch {
    // Not a problem document (a proxy's page): the status says enough.
  }
  // Only the key this tab signed in with signs it out: a key being tried at sign-in is just refused.
  if (response.status === 401 && key === storedKey()) onUnauthorized();
  throw new Problem(response.status, problem.code ?? `HTTP_${response.status}`, problem.detail ?? problem.title ?? response.statusText, problem.errors ?? []);
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await send(method, path, body);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

export const get = <T>(path: string) => api<T>('GET', path);

/** One page of a list; `next` is the API's own link, to pass back as the path. */
export async function page<T>(path: string): Promise<Page<T>> {
  const response = await send('GET', path);
  const link = response.headers.get('link');
  const next = link ? (/<([^>]+)>;\s*rel="next"/.exec(link)?.[1] ?? null) : null;
  return { items: (await response.json()) as T[], next };
}

/** Checks a key before keeping it: GET /me with it. */
export async function whoIs(key: string): Promise<Me> {
  return (await (await send('GET', '/me', undefined, key)).json()) as Me;
}

/** A file the API sends (the certificate ZIP), as a Blob. */
export async function download(path: string): Promise<Blob> {
  return (await send('GET', path)).blob();
}

/**
 * Whether the API offers an operation, read from its OpenAPI document (key-free, sent with an
 * ETag: asked once per page load): the console shows what this API can do, before and after an
 * upgrade alike.
 */
let openapi: Promise<{ paths?: Record<string, Record<string, unknown>> }> | undefined;
export async function offers(method: string, path: string): Promise<boolean> {
  openapi ??= fetch('/openapi.json', { credentials: 'omit' }).then((r) => (r.ok ? r.json() : {}), () => ({}));
  const document = await openapi;
  return Boolean(document.paths?.[path]?.[method.toLowerCase()]);
}

/** Path segments are encoded (an IP list's prefix "192.0.2.0/24" travels as 192.0.2.0%2F24). */
export const seg = (value: string | number) => encodeURIComponent(String(value));

export interface Me {
  id: number;
  name: string;
  email: string;
  nameservers: string[];
  limits: { max_domains: number; max_records_per_domain: number; max_iplists: number; max_ips_per_list: number };
  usage: { domains: number; iplists: number };
}
