// When signatures hold (RFC 4034 §3.1.5): made per window of time, so every answer of one window
// shares its signatures (the signature cache's key) and the answer cache can keep a signed answer
// until its window ends. Inception an hour back (clocks of resolvers run late); expiry a week
// after the window starts plus up to a day of jitter per RRset, so a zone's signatures do not
// all expire in the same second. TTLs are capped below what remains of the validity at the
// window's end, so no resolver keeps a record longer than its signature holds.

export const WINDOW_SECONDS = 86_400;
export const INCEPTION_BACK_SECONDS = 3_600;
export const EXPIRY_SECONDS = 7 * 86_400;
export const JITTER_SECONDS = 86_400;

export interface Validity {
  /** Start of the window, in seconds since the epoch. */
  start: number;
  inception: number;
  /** The window's end, in milliseconds: answers signed in it are not served past it. */
  endsMs: number;
}

export function validityAt(nowMs: number): Validity {
  const start = Math.floor(nowMs / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS;
  return { start, inception: start - INCEPTION_BACK_SECONDS, endsMs: (start + WINDOW_SECONDS) * 1000 };
}

/** FNV-1a of the owner and type: the RRset's jitter, the same on every name server. */
function jitter(owner: string, type: number): number {
  let h = 0x811c9dc5 ^ type;
  for (let i = 0; i < owner.length; i++) h = Math.imul(h ^ owner.charCodeAt(i), 0x01000193);
  return (h >>> 0) % JITTER_SECONDS;
}

export function expirationOf(validity: Validity, owner: string, type: number): number {
  return validity.start + EXPIRY_SECONDS + jitter(owner, type);
}

/**
 * The largest TTL served in a window: what remains of the shortest validity (no jitter) at the
 * window's end, less the window again as margin for resolvers' clocks.
 */
export const MAX_SIGNED_TTL = EXPIRY_SECONDS - 2 * WINDOW_SECONDS;
