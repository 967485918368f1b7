// Schema pieces shared by several resources.
import { Type, type Static, type TInteger, type TString } from 'typebox';

/**
 * A schema annotation: what a field accepts, in words, given as the error when a value does not
 * fit its type or form (instead of "must be of type integer" or a raw regular expression). On a
 * union it speaks for every branch. Read by the API's validation (api/validation.ts).
 */
export const EXPECTED = 'x-expected';

export const IpText = Type.String({ minLength: 2, maxLength: 45, description: 'An IPv4 or IPv6 address' });
export const BackendText = Type.String({
  minLength: 2,
  maxLength: 64,
  description: 'An IP address with an optional port: "192.0.2.1", "192.0.2.1:8080", "2001:db8::1", "[2001:db8::1]:8443" (default port 80)',
});
export const NodeIds = Type.Array(Type.Integer({ minimum: 1 }), {
  maxItems: 256,
  uniqueItems: true,
  description: 'Ids of registered edge nodes',
});
export const Timestamp = Type.String({ format: 'date-time' });
export const Revision = Type.Integer({ minimum: 0, description: 'Global revision of the last change to this resource' });

/** Sorted copy without duplicates: sets of ids are stored in one canonical order. */
export function sortedUnique(values: readonly number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

/**
 * `T | null` as one JSON Schema type list rather than anyOf: validators and fast-json-stringify
 * handle a type list directly, where anyOf makes the serializer validate every value at run time.
 */
export function Nullable<T extends TString | TInteger>(schema: T, options: { description?: string } = {}) {
  const { type, ...rest } = schema as unknown as { type: string };
  return Type.Unsafe<Static<T> | null>({ ...rest, ...options, type: [type, 'null'] });
}
