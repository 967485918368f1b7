// One pino logger for the process; each part takes a child with its own `component` field. Lines
// go to standard output through common/log-output.ts: a bounded backlog, failures dropped and
// counted, never a thrown error or a wait. At a terminal they are written for a person
// (common/log-pretty.ts); anywhere else (a file, a pipe, a shipper) as JSON, one object a line.
import { isatty } from 'node:tty';
import { pino, type DestinationStream, type Logger } from 'pino';
import { prettyLine } from './common/log-pretty.ts';
import { standardOutput } from './common/log-output.ts';
import { logOutput } from './config/logging.ts';

export type LogFormat = 'auto' | 'json' | 'pretty';

/** PALISADE_LOG_FORMAT (declared in config/logging.ts), read here so that every role and the tests' own loggers agree. */
function chosenFormat(format: 'auto' | 'json' | 'pretty'): 'json' | 'pretty' {
  if (format === 'json' || format === 'pretty') return format;
  return isatty(1) ? 'pretty' : 'json';
}

function destination(): DestinationStream {
  const out = standardOutput();
  const wanted = logOutput();
  if (chosenFormat(wanted.format) === 'json') return out;
  const colour = isatty(1) && wanted.colour;
  return { write: (line: string) => out.write(prettyLine(line, colour)) };
}

export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      // The request serializer does not log headers; this keeps a key out even if one is added.
      redact: { paths: ['req.headers["x-auth-key"]', 'headers["x-auth-key"]'], censor: '[redacted]' },
    },
    destination(),
  );
}
