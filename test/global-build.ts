// The tests start the real `palisade` command, which runs the compiled output in dist/: build it
// first when src/ has changed since the last build, so no test runs old code.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build.mjs', import.meta.url)), '--if-stale'], { stdio: 'inherit' });
}
