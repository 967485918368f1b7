// The one line a user on an older Node.js sees before anything else runs. Without it, Node 20 gets
// as far as starting the edge and dies in undici with a stack trace that names neither Node nor a
// version. Plain JavaScript with nothing but `process`, so that any Node that can read an ES module
// can run it. The minimum is package.json's `engines.node`.
const MINIMUM = [22, 19];
const RECOMMENDED = 24;

/** Whether a Node.js version string (`process.versions.node`) meets the minimum. */
export function nodeVersionIsEnough(version) {
  const [major, minor] = version.split('.').map(Number);
  return major > MINIMUM[0] || (major === MINIMUM[0] && minor >= MINIMUM[1]);
}

/** Says which Node is needed, which one this is and how to get it, and exits, when it is too old. */
export function requireNodeVersion(what = 'palisade') {
  if (nodeVersionIsEnough(process.versions.node)) return;
  process.stderr.write(
    `${what}: needs Node.js ${MINIMUM.join('.')} or newer (${RECOMMENDED} recommended); this is Node.js ${process.version} (${process.execPath}). ` +
      `Install Node.js ${RECOMMENDED} (https://nodejs.org/, or \`nvm install ${RECOMMENDED}\`) and run this again with it.\n`,
  );
  process.exit(1);
}

requireNodeVersion();
