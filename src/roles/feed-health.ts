// Health of a consumer of the change feed (name server, edge), for /healthz: degraded (503) once
// the API's revision has not been applied for longer than the bound — pulls failing (API away,
// bad token) or the consumer stuck behind. A local state that cannot be written (a full or
// failing disk) is degraded too, but 200: the consumer still serves what the API has and keeps
// applying its changes (in memory), so it stays in service; `local_state` says why and since when.
import { byLabel, family, single, type MetricsSnapshot } from '../common/metrics/family.ts';

export interface FeedProgress {
  applied: number;
  current: number;
  lastSuccess: number;
  behindSince: number;
  startedAt: number;
  localStateProblem?: { reason: string; since: number } | undefined;
}

export function feedHealth(feed: FeedProgress, boundMs: number, extra: Record<string, unknown>): { ok: boolean; [key: string]: unknown } {
  const now = Date.now();
  const lag = Math.max(0, feed.current - feed.applied);
  const age = feed.lastSuccess === 0 ? null : now - feed.lastSuccess;
  let reason: string | undefined;
  if (feed.applied === 0) reason = 'no state yet: the first snapshot has not been loaded';
  else if ((age ?? now - feed.startedAt) > boundMs) reason = `no successful pull from the API for ${Math.round((age ?? now - feed.startedAt) / 1000)} s`;
  else if (feed.behindSince !== 0 && now - feed.behindSince > boundMs) reason = `${lag} revisions behind the API for ${Math.round((now - feed.behindSince) / 1000)} s`;
  const disk = feed.localStateProblem;
  const localState = disk
    ? { written: false, reason: `local state not written (${disk.reason}); serving and applying changes in memory`, since: new Date(disk.since).toISOString() }
    : { written: true };
  return {
    ok: reason === undefined,
    status: reason || disk ? 'degraded' : 'ok',
    reason: reason ?? (disk && localState.reason),
    revision: feed.applied,
    api_revision: feed.current,
    lag,
    last_sync_ms_ago: age,
    local_state: localState,
    ...extra,
  };
}

const SYNC_LAG = family({ name: 'palisade_sync_lag_revisions', type: 'gauge', help: 'Revisions the API is ahead of this consumer.', combine: 'first' });
const SYNC_NOTIFICATIONS = family({ name: 'palisade_sync_notifications_total', type: 'counter', help: 'Push notifications, by outcome.', labels: ['outcome'], combine: 'first' });

/** The push counters and lag every consumer's /metrics carries (its feed consumer's: one per host). */
export function feedMetrics(lag: number, pushes: { accepted: number; upToDate: number; rejected: number }): MetricsSnapshot {
  return [
    single(SYNC_LAG, lag),
    byLabel(SYNC_NOTIFICATIONS, [
      ['accepted', pushes.accepted],
      ['up_to_date', pushes.upToDate],
      ['rejected', pushes.rejected],
    ]),
  ];
}
