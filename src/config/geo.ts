// The geo database behind geo-targeted answers (the name server's and the edge's).
import { resolve } from 'node:path';
import { BUNDLED_GEOIP_DB } from '../geo/default-db.ts';
import { optionalText, readTable } from './kinds.ts';
import type { Config } from './types.ts';

export const GEO_SETTINGS = {
  PALISADE_GEOIP_DB: optionalText({ help: 'MaxMind DB file (plain or gzipped) for geo-targeted answers, or `off`; see "Geo-targeted answers"', shown: 'bundled DB' }),
};

export function geoConfig(env: Record<string, string | undefined>, problems: string[]): Pick<Config, 'geoipDb'> {
  const path = readTable(GEO_SETTINGS, env, problems).PALISADE_GEOIP_DB;
  // Unset: the bundled database; "off": none (geo-targeted records answer with their general set).
  return { geoipDb: !path ? BUNDLED_GEOIP_DB : path === 'off' ? undefined : resolve(path) };
}
