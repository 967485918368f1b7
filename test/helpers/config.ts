import { loadConfig, type Config } from '../../src/config.ts';

/** Rate limits off: tests send bursts from one address; the rate-limit tests check the limits. */
export const NO_RATE_LIMITS = { PALISADE_API_RATE_PER_ADDRESS: '0', PALISADE_API_RATE_PER_KEY: '0', PALISADE_DNS_RRL_RATE: '0', PALISADE_EDGE_CLIENT_RATE: '0' };

/**
 * Ownership proof off (issue 26): the suite's tests register domains and expect them served,
 * routed and certified at once, as a single-tenant install does. The ownership tests set
 * PALISADE_OWNERSHIP_PROOF=required themselves.
 */
export const OWNERSHIP_OFF = { PALISADE_OWNERSHIP_PROOF: 'off' };

/** The operator key test processes seal private keys with (a test that checks its absence overrides it). */
export const TEST_SECRET_KEY = { PALISADE_SECRET_KEY: '5ec12e7'.padEnd(64, '0') };

/** The configuration a test server uses: loopback, a random port, its own data directory. */
export function testConfig(dataDir: string, env: Record<string, string> = {}): Config {
  return loadConfig({ PALISADE_DATA_DIR: dataDir, PALISADE_API_PORT: '0', PALISADE_LOG_LEVEL: 'silent', ...NO_RATE_LIMITS, ...OWNERSHIP_OFF, ...TEST_SECRET_KEY, ...env });
}
