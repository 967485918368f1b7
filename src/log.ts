// One pino logger for the process; each part takes a child with its own `component` field.
import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({
    level,
    // The request serializer does not log headers; this keeps a key out even if one is added.
    redact: { paths: ['req.headers["x-auth-key"]', 'headers["x-auth-key"]'], censor: '[redacted]' },
  });
}
