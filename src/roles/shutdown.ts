// Graceful shutdown shared by the long-running roles: on SIGTERM or SIGINT (or, for a part of
// serve, its supervisor gone), log once, run the role's closing steps in order, and exit 0
// whatever they throw. The steps get a bounded time: a connection that never ends (a client
// holding a keep-alive or an upgraded socket) must not keep a supervisor waiting; past the bound
// the process says so and exits.
import type { Logger } from 'pino';

const SHUTDOWN_BOUND_MS = 10_000;

export function closeOnSignal(log: Logger, close: () => Promise<void>, options: { boundMs?: number } = {}): void {
  const boundMs = options.boundMs ?? SHUTDOWN_BOUND_MS;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const bound = setTimeout(() => {
      log.warn({ afterMs: boundMs }, 'shutdown did not finish in time; exiting anyway');
      process.exit(0);
    }, boundMs);
    bound.unref();
    try {
      await close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  // A part whose supervisor is gone (killed, even with SIGKILL) must not live on holding its ports.
  if (process.send) process.on('disconnect', () => void stop('supervisor gone'));
}
