// The transport of a consumer fed by the API over HTTP (name servers, edges on their own hosts):
// the poll timer (a verified push calls the consumer's catchUp directly), authenticated GETs with
// their time bounds, 410 read as "gone", and the operator's hint when the API cannot be reached.
// What the bodies mean is the role's source's business (name-server-sources.ts, edge/feed/).
import type { Logger } from 'pino';
import type { FeedSource, Gone } from './feed-consumer.ts';

/** A page of changes may take seconds. */
const CHANGES_TIMEOUT_MS = 10_000;
/** A snapshot may take minutes to arrive. */
const SNAPSHOT_TIMEOUT_MS = 600_000;

export interface HttpFeedOptions {
  /** Base URL of the API, e.g. http://api.internal:8080 */
  url: string;
  token: string;
  pollMs: number;
  log: Logger;
  /** Changes asked for per page (1000). */
  pageLimit?: number;
}

/** The parts of a FeedSource every HTTP-fed consumer shares. */
export type HttpSourceParts = Pick<FeedSource<never, never>, 'awaitFirstSnapshot' | 'follow' | 'failure' | 'messages'>;

export class HttpFeed {
  constructor(readonly options: HttpFeedOptions) {}

  readonly parts: HttpSourceParts = {
    awaitFirstSnapshot: false,
    follow: (wake) => {
      const timer = setInterval(wake, this.options.pollMs);
      timer.unref();
      wake();
      return () => clearInterval(timer);
    },
    failure: (error) => ({
      fields: { err: pullFailure(error), url: this.options.url },
      message: `cannot pull from the API; serving the last applied state. ${certificateRefused(error) ? "The API's certificate is not trusted: set PALISADE_SYNC_CA_FILE to the PEM certificate of the CA that signed it" : 'Check PALISADE_SYNC_URL, the network path to the API, and PALISADE_SYNC_TOKEN'}`,
    }),
    messages: { gone: 'our revision is older than the API keeps; loading a fresh snapshot', back: 'API reachable again; caught up' },
  };

  private get(path: string, timeoutMs: number): Promise<Response> {
    return fetch(`${this.options.url}${path}`, { headers: { authorization: `Bearer ${this.options.token}` }, signal: AbortSignal.timeout(timeoutMs) });
  }

  /** One JSON document; undefined when the API answers 404. */
  async document<T>(path: string): Promise<T | undefined> {
    const res = await this.get(path, CHANGES_TIMEOUT_MS);
    if (res.status === 404) {
      await res.body?.cancel();
      return undefined;
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`GET ${path} answered ${res.status}`);
    }
    return (await res.json()) as T;
  }

  /** The page of changes after `since` at `path`; gone on 410. */
  async changes<Page>(path: string, since: number): Promise<Page | Gone> {
    const res = await this.get(`${path}${path.includes('?') ? '&' : '?'}since=${since}&limit=${this.options.pageLimit ?? 1000}`, CHANGES_TIMEOUT_MS);
    if (res.status === 410) {
      await res.body?.cancel();
      return { gone: true };
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`GET ${path} answered ${res.status}`);
    }
    return (await res.json()) as Page;
  }

  /** The snapshot's body as it streams in. */
  async snapshot(path: string): Promise<AsyncIterable<Uint8Array>> {
    const res = await this.get(path, SNAPSHOT_TIMEOUT_MS);
    if (res.status !== 200 || !res.body) {
      await res.body?.cancel();
      throw new Error(`GET ${path} answered ${res.status}`);
    }
    return res.body;
  }
}

/** fetch says only "fetch failed": the cause (refused, reset, a certificate) is what an operator needs. */
function pullFailure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause ? `${(error as Error).message}: ${cause.code ?? ''}${cause.code && cause.message ? ' ' : ''}${cause.message ?? ''}`.trim() : (error as Error).message;
}

/** TLS verification failures of the API's certificate (its CA unknown, its name or dates wrong). */
const CERTIFICATE_CODES = new Set(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID']);

function certificateRefused(error: unknown): boolean {
  return CERTIFICATE_CODES.has((error as { cause?: { code?: string } }).cause?.code ?? '');
}
