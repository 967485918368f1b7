// Logs a person reads at a terminal, JSON for everything else: the line format itself, and real
// processes started at a pseudo-terminal (util-linux `script`) and on a pipe.
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { prettyLine } from '../../src/common/log-pretty.ts';
import { BIN } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

afterAll(() => removeTempDirs());

describe('readable log lines', () => {
  it('time, level, part, message, then the fields', () => {
    const line = JSON.stringify({ level: 40, time: Date.UTC(2026, 10, 29, 12, 4, 5, 123), pid: 7, hostname: 'h', part: 'api', component: 'certs', msg: 'a task failed', domain: 'example.org', error: 'no CA here', attempts: 2, names: ['a', 'b'] });
    expect(prettyLine(line)).toBe('12:04:05.123 WARN  api/certs a task failed  domain=example.org error="no CA here" attempts=2 names=["a","b"]\n');
    expect(prettyLine('not json')).toBe('not json\n');
  });

  /**
   * The API's output from its start until it says it serves (then it is stopped): at most 20 s.
   * `script` gives the command a pseudo-terminal as its standard output; without it, a pipe.
   */
  const started = (format: string | undefined, terminal: boolean): Promise<string> => {
    const env = { ...process.env, PALISADE_DATA_DIR: tempDir(), PALISADE_API_PORT: '0', PALISADE_LOG_LEVEL: 'info', NO_COLOR: '1', ...(format && { PALISADE_LOG_FORMAT: format }) };
    if (format === undefined) delete (env as Record<string, string | undefined>).PALISADE_LOG_FORMAT;
    const command = `timeout -s INT 20 ${process.execPath} ${BIN} api`;
    const [file, args] = terminal ? ['script', ['-qec', command, '/dev/null']] : ['bash', ['-c', command]];
    // Its own process group, so that the stop reaches the API under `script` or `bash`.
    const child = spawn(file as string, args as string[], { env, detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    return new Promise((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (/palisade serving[^\n]*\n/.test(stdout)) {
          try {
            process.kill(-child.pid!, 'SIGINT');
          } catch {
            // Gone already.
          }
        }
      });
      child.on('close', () => resolve(stdout));
    });
  };

  it('a terminal gets readable lines; a pipe gets JSON; PALISADE_LOG_FORMAT decides when set', async () => {
    // Four processes at once: each ends as soon as it has said it serves.
    const [terminal, pipe, json, pretty] = await Promise.all([started(undefined, true), started(undefined, false), started('json', true), started('pretty', false)]);
    expect(terminal).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}palisade serving {2}dataDir=/m);
    expect(terminal).not.toContain('"level":');
    expect(pipe).toMatch(/^\{"level":30,.*"msg":"palisade serving"\}$/m);
    expect(json).toMatch(/^\{"level":30,/m);
    expect(pretty).toMatch(/ INFO {2}palisade serving/);
  });
});
