// The resolutions uptime is kept at, how long each is kept, and which period a time falls in.
// Pure. Every measure is added to its minute, its hour and its day as it arrives (downsampling
// on write), and each resolution expires on its own clock: storage per domain is bounded by the
// retention, whatever the traffic.

export type Resolution = 'minute' | 'hour' | 'day';
export const RESOLUTIONS: readonly Resolution[] = ['minute', 'hour', 'day'];

export const PERIOD_MS: Record<Resolution, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** Kept this long after the period starts (a little more than what GET …/uptime shows). */
export const RETENTION_MS: Record<Resolution, number> = { minute: 65 * 60_000, hour: 48 * 3_600_000, day: 35 * 86_400_000 };

/** What GET …/uptime shows at each resolution: periods, newest last. */
export const SHOWN: Record<Resolution, number> = { minute: 60, hour: 24, day: 30 };

/** Start of the period (UTC) holding `at`. */
export const periodStart = (resolution: Resolution, at: number): number => at - (at % PERIOD_MS[resolution]);

/** When a period's data may be dropped. */
export const expiresAt = (resolution: Resolution, start: number): number => start + RETENTION_MS[resolution];
