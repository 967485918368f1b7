import { loadConfig, type Config } from '../../src/config.ts';

/** The configuration a test server uses: loopback, a random port, its own data directory. */
export function testConfig(dataDir: string, env: Record<string, string> = {}): Config {
  return loadConfig({ PALISADE_DATA_DIR: dataDir, PALISADE_API_PORT: '0', PALISADE_LOG_LEVEL: 'silent', ...env });
}
