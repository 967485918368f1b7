// The GeoNames IDs a DNS record's `target` may hold: 250 countries and 7 continents, the same
// integers MaxMind databases carry as country.geoname_id / continent.geoname_id.
// Source of record: GeoNames countryInfo.txt (CC BY 4.0), shipped as countries.tsv beside this file.
import { readFileSync } from 'node:fs';

export interface GeoTarget {
  id: number;
  kind: 'country' | 'continent';
  /** ISO 3166-1 alpha-2 for countries, the two-letter continent code for continents. */
  code: string;
  name: string;
  /** For countries: the continent's GeoNames ID. */
  continentId?: number;
}

const CONTINENTS: ReadonlyArray<[string, number, string]> = [
  ['AF', 6255146, 'Africa'],
  ['AS', 6255147, 'Asia'],
  ['EU', 6255148, 'Europe'],
  ['NA', 6255149, 'North America'],
  ['SA', 6255150, 'South America'],
  ['OC', 6255151, 'Oceania'],
  ['AN', 6255152, 'Antarctica'],
];

function parseCountries(text: string): GeoTarget[] {
  const out: GeoTarget[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const [iso, id, , continentId, name] = line.split('\t');
    if (!iso || !id || !continentId || !name) throw new Error(`geo: malformed countries.tsv line: ${line}`);
    out.push({ id: Number(id), kind: 'country', code: iso, name, continentId: Number(continentId) });
  }
  return out;
}

const countries = parseCountries(readFileSync(new URL('./countries.tsv', import.meta.url), 'utf8'));
const continents: GeoTarget[] = CONTINENTS.map(([code, id, name]) => ({ id, kind: 'continent', code, name }));

export const geoTargets: readonly GeoTarget[] = [...continents, ...countries];
const byId = new Map(geoTargets.map((t) => [t.id, t]));
const countryByIso = new Map(countries.map((c) => [c.code, c]));

export function geoTargetById(id: number): GeoTarget | undefined {
  return byId.get(id);
}

export function countryByIsoCode(iso: string): GeoTarget | undefined {
  return countryByIso.get(iso.toUpperCase());
}
