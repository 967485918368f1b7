// One pino logger for the process; each part takes a child with its own `component` field. Lines
// go to standard output through common/log-output.ts: a bounded backlog, failures dropped and
// counted, never a thrown error or a wait.
import { pino, type Logger } from 'pino';
import { standardOutput } from './common/log-output.ts';

export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      // The request serializer does not log headers; this keeps a key out even if one is added.
      redact: { paths: ['req.headers["x-auth-key"]', 'headers["x-auth-key"]'], censor: '[redacted]' },
    },
    standardOutput(),
  );
}
