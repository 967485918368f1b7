// The domain's country rule (Cloudflare's country rules): 0 off, 1 only the listed countries, 2
// all but them. A client the database cannot place is "XX": blocked in mode 1 unless listed,
// allowed in mode 2 unless listed. Pure.
export function geoBlocked(geomode: number, geolist: readonly string[], country: string): boolean {
  if (geomode === 0) return false;
  const listed = geolist.some((c) => c.toUpperCase() === country);
  return geomode === 1 ? !listed : listed;
}
