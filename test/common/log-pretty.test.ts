// Logs a person reads at a terminal, JSON for everything else: the line format itself, and real
// processes started at a pseudo-terminal (util-linux `script`) and on a pipe.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { prettyLine } from '../../src/common/log-pretty.ts';
import { BIN } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

const run = promisify(execFile);
afterAll(() => removeTempDirs());

describe('readable log lines', () => {
  it('time, level, part, message, then the fields', () => {
    const line = JSON.stringify({ level: 40, time: Date.UTC(2026, 10, 29, 12, 4, 5, 123), pid: 7, hostname: 'h', part: 'api', component: 'certs', msg: 'a task failed', domain: 'example.org', error: 'no CA here', attempts: 2, names: ['a', 'b'] });
    expect(prettyLine(line)).toBe('12:04:05.123 WARN  api/certs a task failed  domain=example.org error="no CA here" attempts=2 names=["a","b"]\n');
    expect(prettyLine('not json')).toBe('not json\n');
  });

  const started = async (format: string | undefined, terminal: boolean): Promise<string> => {
    const env = { ...process.env, PALISADE_DATA_DIR: tempDir(), PALISADE_API_PORT: '0', PALISADE_LOG_LEVEL: 'info', NO_COLOR: '1', ...(format && { PALISADE_LOG_FORMAT: format }) };
    if (format === undefined) delete (env as Record<string, string | undefined>).PALISADE_LOG_FORMAT;
    const command = `timeout -s INT 4 ${process.execPath} ${BIN} api`;
    // `script` gives the command a pseudo-terminal as its standard output; without it, a pipe.
    const args = terminal ? ['script', ['-qec', command, '/dev/null']] : ['bash', ['-c', command]];
    const { stdout } = await run(args[0] as string, args[1] as string[], { env, timeout: 20_000 }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
    return stdout;
  };

  it('a terminal gets readable lines; a pipe gets JSON; PALISADE_LOG_FORMAT decides when set', async () => {
    const terminal = await started(undefined, true);
    expect(terminal).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}palisade serving {2}dataDir=/m);
    expect(terminal).not.toContain('"level":');
    const pipe = await started(undefined, false);
    expect(pipe).toMatch(/^\{"level":30,.*"msg":"palisade serving"\}$/m);
    expect(await started('json', true)).toMatch(/^\{"level":30,/m);
    expect(await started('pretty', false)).toMatch(/ INFO {2}palisade serving/);
  });
});
