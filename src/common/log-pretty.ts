// Log lines for a person at a terminal: pino's JSON line turned into
//   12:04:05.123 INFO  api  palisade serving  api=http://127.0.0.1:8080 store=embedded
// Machines (a shipper, a file, a pipe) keep the JSON. Pure: one line in, one line out.

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
/** Fields every line has, shown in its own place or not at all. */
const PLACED = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'part', 'component']);
const COLOURS: Record<number, string> = { 40: '\x1b[33m', 50: '\x1b[31m', 60: '\x1b[31m' };
const RESET = '\x1b[0m';

/** A field's value as it is read: text bare unless it holds spaces, anything else as JSON. */
function shown(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  return JSON.stringify(value) ?? String(value);
}

/** One JSON log line as a readable line (a line that is not JSON passes as it is). */
export function prettyLine(line: string, colour = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const level = typeof entry.level === 'number' ? entry.level : 30;
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
  const where = [entry.part, entry.component].filter((v) => typeof v === 'string').join('/');
  const fields = Object.entries(entry)
    .filter(([key]) => !PLACED.has(key))
    .map(([key, value]) => `${key}=${shown(value)}`)
    .join(' ');
  const name = LEVELS[level] ?? String(level);
  const tag = colour && COLOURS[level] ? `${COLOURS[level]}${name}${RESET}` : name;
  return `${[time, tag, where, typeof entry.msg === 'string' ? entry.msg : ''].filter(Boolean).join(' ')}${fields ? `  ${fields}` : ''}\n`;
}
