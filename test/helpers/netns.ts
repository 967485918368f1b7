// A network namespace of the test's own, joined to this one by a veth pair: a host at a
// non-loopback address (in 10.213.0.0/16, a /30 each) that nothing but this machine reaches. What
// must be seen from "another address" (a refusal that loopback would pass) is tested with the
// server inside the namespace and the client here, so every server still listens only where the
// test put it. Needs root and `ip` (Debian package iproute2); a missing one fails with one line.
import { execFileSync, spawnSync } from 'node:child_process';

export interface TestNetns {
  name: string;
  /** This side's address: the source of the test's connections into the namespace. */
  hostAddress: string;
  /** The namespace's address, where a server started inside it listens. */
  nsAddress: string;
  /** Put before a command to run it inside the namespace. */
  prefix: string[];
  remove(): void;
}

let made = 0;

function ip(args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

export function createNetns(): TestNetns {
  if (spawnSync('ip', ['-V']).error) throw new Error('this test needs `ip` (Debian package iproute2): apt-get install iproute2');
  if (process.getuid?.() !== 0) throw new Error('this test makes a network namespace and needs root');
  // Unique per test worker and call: one /30 of 10.213.0.0/16 each, names of ≤ 15 characters.
  const k = (process.pid * 8 + made++) % 16384;
  const name = `palisade-t${k}`;
  const [hostSide, nsSide] = [`pvh${k}`, `pvn${k}`];
  const net = `10.213.${k >> 6}.${(k & 63) * 4}`.split('.').map(Number);
  const at = (n: number) => `${net[0]}.${net[1]}.${net[2]}.${net[3]! + n}`;
  // One left by a run that was killed would make `add` fail.
  spawnSync('ip', ['netns', 'del', name]);
  spawnSync('ip', ['link', 'del', hostSide]);
  ip(['netns', 'add', name]);
  try {
    ip(['link', 'add', hostSide, 'type', 'veth', 'peer', 'name', nsSide, 'netns', name]);
    ip(['addr', 'add', `${at(1)}/30`, 'dev', hostSide]);
    ip(['link', 'set', hostSide, 'up']);
    ip(['-n', name, 'addr', 'add', `${at(2)}/30`, 'dev', nsSide]);
    ip(['-n', name, 'link', 'set', nsSide, 'up']);
    ip(['-n', name, 'link', 'set', 'lo', 'up']);
  } catch (error) {
    spawnSync('ip', ['netns', 'del', name]);
    throw error;
  }
  return {
    name,
    hostAddress: at(1),
    nsAddress: at(2),
    prefix: ['ip', 'netns', 'exec', name],
    // Deleting the namespace deletes its end of the pair, and with it this end.
    remove: () => void spawnSync('ip', ['netns', 'del', name]),
  };
}
