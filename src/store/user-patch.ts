// An operator's change to an account, the same on both stores.
import type { UserState } from '../model/user.ts';
import type { UserPatch } from './types.ts';

export function applyUserPatch(user: UserState, patch: UserPatch): UserState {
  return {
    ...user,
    limits: { ...user.limits, ...patch.limits },
    ...(patch.disabled !== undefined && { disabled: patch.disabled }),
    ...(patch.reservedZones !== undefined && { reservedZones: patch.reservedZones }),
    ...(patch.nameservers !== undefined && { nameservers: patch.nameservers }),
  };
}
