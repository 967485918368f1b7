// The GeoNames IDs a DNS record's `target` may hold: 250 countries (geo-countries.ts) and 7
// continents, the same integers MaxMind databases carry as country.geoname_id /
// continent.geoname_id. Pure data: the model, the name servers, the edge and the API read it.
import { COUNTRIES } from './geo-countries.ts';

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

const countries: GeoTarget[] = COUNTRIES.map(([code, id, continentId, name]) => ({ id, kind: 'country', code, name, continentId }));
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
