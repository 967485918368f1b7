// What the contract's parts share: how an adapter is opened, and small builders.
import { expect } from 'vitest';
import { ApiError } from '../../../src/errors.ts';
import { DOMAIN_DEFAULTS, type DomainState } from '../../../src/model/domain.ts';
import type { RecordState } from '../../../src/model/record.ts';
import type { MutationContext, Store, Zone } from '../../../src/store/types.ts';

/** Opens a fresh, empty store of the adapter under test (`reopen`: the same data, opened again). */
export type OpenStore = () => Promise<{ store: Store; reopen?: () => Promise<Store> }>;

export function zoneFor(name: string, ownerId: number, ctx: MutationContext): Zone {
  const domain: DomainState = {
    ...DOMAIN_DEFAULTS,
    backend: '203.0.113.10',
    domain: name,
    ownerId,
    ns_active: false,
    created: ctx.now,
    updated: ctx.now,
    revision: 0,
  };
  return { domain, records: [] };
}

export function aRecord(id: number, name: string, value: string): RecordState {
  return { id, name, type: 1, value, ttl: 300, priority: null, target: [] };
}

export async function expectApiError(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).code).toBe(code);
}
