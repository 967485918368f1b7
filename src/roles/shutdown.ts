// Graceful shutdown shared by the long-running roles: on SIGTERM or SIGINT, log once, run the
// role's closing steps in order, and exit 0 whatever they throw.
import type { Logger } from 'pino';

export function closeOnSignal(log: Logger, close: () => Promise<void>): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    try {
      await close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
