// Preloaded into an edge under benchmark (node --import) when profiling: SIGTTIN starts the V8
// CPU profiler, SIGTTOU stops it and writes the profile to $BENCH_PROFILE_DIR/NAME.cpuprofile,
// NAME taken from the file $BENCH_PROFILE_DIR/next (written by the benchmark before stopping).
import { Session } from 'node:inspector';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.BENCH_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  process.on('SIGTTIN', () => {
    session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 200 }, () => session.post('Profiler.start')));
  });
  process.on('SIGTTOU', () => {
    session.post('Profiler.stop', (error, result) => {
      const name = readFileSync(join(dir, 'next'), 'utf8').trim();
      writeFileSync(join(dir, `${name}.cpuprofile`), error ? '{}' : JSON.stringify(result.profile));
      writeFileSync(join(dir, `${name}.done`), '');
    });
  });
}
