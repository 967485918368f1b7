// How a process logs. log.ts reads the format here too (logFormat), so every role and the tests'
// own loggers agree; loadConfig reports a wrong value.
import { choice, present, readTable, text } from './kinds.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const LOGGING_SETTINGS = {
  PALISADE_LOG_LEVEL: text('info', {
    help:
      'pino level (' + LOG_LEVELS.join(', ') + '). Lines go to standard output, written asynchronously and gathered for up to 5 ms (the event loop never waits for a disk or a log reader); ' +
      'at most 16 MiB wait for a slow reader, past that (and on a failed write: a full disk, a closed pipe) lines are dropped, counted (`palisade_log_lines_dropped` on the edge\'s `/metrics`) ' +
      'and said on standard error every 10 s — the process never grows, waits or stops for its log',
  }),
  PALISADE_LOG_FORMAT: choice(['auto', 'json', 'pretty'] as const, 'auto', {
    help:
      '`auto`: readable lines (`12:04:05.123 INFO  api palisade serving  api=…`) when standard output is a terminal, JSON one object a line otherwise (a file, a pipe, a log shipper); `json` or `pretty` to choose',
    must: 'auto (readable lines at a terminal, JSON elsewhere), json or pretty',
  }),
  NO_COLOR: present({ help: 'set (to anything): readable lines without colour' }),
};

/** Checks the logging settings (the level is read by loadConfig, the format and colour by log.ts). */
export function loggingConfig(env: Record<string, string | undefined>, problems: string[]): { logLevel: string } {
  const v = readTable(LOGGING_SETTINGS, env, problems);
  if (!(LOG_LEVELS as readonly string[]).includes(v.PALISADE_LOG_LEVEL)) problems.push(`PALISADE_LOG_LEVEL=${v.PALISADE_LOG_LEVEL}: must be one of ${LOG_LEVELS.join(', ')}`);
  return { logLevel: v.PALISADE_LOG_LEVEL };
}

/** PALISADE_LOG_FORMAT and NO_COLOR for log.ts: a wrong format is `auto` here (loadConfig says it is wrong). */
export function logOutput(env: Record<string, string | undefined> = process.env): { format: 'auto' | 'json' | 'pretty'; colour: boolean } {
  const v = readTable(LOGGING_SETTINGS, env, []);
  return { format: v.PALISADE_LOG_FORMAT, colour: !v.NO_COLOR };
}
