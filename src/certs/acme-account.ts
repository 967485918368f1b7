// The ACME account: one per directory URL, its key sealed in the store, created on first use
// and reused ever after (a new account per start would lose the CA's history and rate budget).
import { Agent, get } from 'node:https';
import { createSecureContext, rootCertificates } from 'node:tls';
import * as acme from 'acme-client';
import type { CertConfig } from '../config.ts';
import type { Store } from '../store/types.ts';
import type { SecretBox } from './secret-box.ts';

interface AccountDoc {
  key: string;
  url: string;
}

/** The agent every request to the CA goes through (acme-client's and the probe's). */
let agent: Agent | undefined;

/**
 * acme-client's HTTP client is one per process: trust the operator's extra CA for the directory
 * (one secure context, built once: a context with the system's roots and an extra CA costs tens
 * of milliseconds of CPU, and the agent's key would otherwise stringify them at every request),
 * and retry a failing request only once, briefly (our tasks retry with their own backoff).
 */
function configureHttp(config: CertConfig): Agent {
  if (!agent) {
    const secureContext = config.caPem ? createSecureContext({ ca: [...rootCertificates, config.caPem] }) : undefined;
    agent = new Agent({ keepAlive: true, ...(secureContext && { secureContext }) });
    acme.axios.defaults.httpsAgent = agent;
  }
  const settings = (acme.axios.defaults as unknown as { acmeSettings: { retryMaxAttempts: number; retryDefaultDelay: number } }).acmeSettings;
  settings.retryMaxAttempts = 1;
  settings.retryDefaultDelay = 1;
  return agent;
}

/**
 * GET the directory: whether the CA answers at all. acme-client loses a network error (it
 * surfaces as "TypeError: Cannot read properties of undefined (reading 'config')"), so the
 * reason is found out here first, through the same agent.
 */
export function probeDirectory(url: string, through: Agent, timeoutMs = 5000): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (error: Error & { code?: string }) => reject(Object.assign(new Error(`${error.code ? `${error.code}: ` : ''}${error.message}`), { code: error.code ?? 'ECONNABORTED' }));
    const req = get(url, { agent: through, timeout: timeoutMs }, (res) => {
      res.resume();
      if (res.statusCode === 200) resolve();
      else reject(new Error(`the directory answered HTTP ${res.statusCode}`));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs / 1000} s`), { code: 'ETIMEDOUT' })));
    req.on('error', fail);
  });
}

export class AcmeAccount {
  private client: acme.Client | undefined;
  private readonly agent: Agent;

  constructor(
    private readonly store: Store,
    private readonly config: CertConfig & { directoryUrl: string },
    private readonly box: SecretBox,
  ) {
    this.agent = configureHttp(config);
  }

  /** A client signed in as the account (created at the CA and stored on first use). */
  async get(): Promise<acme.Client> {
    await probeDirectory(this.config.directoryUrl, this.agent);
    if (this.client) return this.client;
    const { directoryUrl } = this.config;
    const backoff = { backoffMin: this.config.pollMinMs, backoffMax: Math.min(this.config.pollMinMs * 10, 30_000), backoffAttempts: 12 };
    const doc = await this.store.getDoc<AccountDoc>('acme', directoryUrl);
    if (doc) {
      this.client = new acme.Client({ directoryUrl, accountKey: this.box.open(doc.key), accountUrl: doc.url, ...backoff });
      return this.client;
    }
    const key = (await acme.crypto.createPrivateEcdsaKey()).toString();
    const client = new acme.Client({ directoryUrl, accountKey: key, ...backoff });
    await client.createAccount({ termsOfServiceAgreed: true, ...(this.config.email && { contact: [`mailto:${this.config.email}`] }) });
    await this.store.putDoc('acme', directoryUrl, { key: this.box.seal(key), url: client.getAccountUrl() } satisfies AccountDoc);
    this.client = client;
    return client;
  }
}
