// Graceful shutdown shared by the long-running roles: on SIGTERM or SIGINT, log once, run the
// role's closing steps in order, and exit 0 whatever they throw. The steps get a bounded time: a
// connection that never ends (a client holding a keep-alive or an upgraded socket) must not keep
// a supervisor waiting; past the bound the process says so and exits.
import type { Logger } from 'pino';

const SHUTDOWN_BOUND_MS = 10_000;

export function closeOnSignal(log: Logger, close: () => Promise<void>): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const bound = setTimeout(() => {
      log.warn({ afterMs: SHUTDOWN_BOUND_MS }, 'shutdown did not finish in time; exiting anyway');
      process.exit(0);
    }, SHUTDOWN_BOUND_MS);
    bound.unref();
    try {
      await close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
