// The GeoNames target table, as geo's readers (the name servers, the edge) have long imported it
// from here. The table itself is pure data and lives in the model (../model/geo-targets.ts).
export { countryByIsoCode, geoTargetById, geoTargets, type GeoTarget } from '../model/geo-targets.ts';
