#!/usr/bin/env bash
# step: a fresh clone passes `npm ci && npm test` for an ordinary user with no browser and no DATABASE_URL
# (`npm test` is the unit, integration and e2e tiers; of the slow tier, which .ci/run runs, only the browser
# test runs here, to prove that it skips with its line where no browser is.)
# Run as root, it creates the ordinary user `mas-ci` when missing and runs as that user; run as an ordinary
# user, it runs as that user. The clone is of the commit checked out here (uncommitted changes are not in it).
# PATH holds Node, npm and a shell only, so no browser is found: the browser test must skip with its line.
# The user's npm cache is seeded from this one's once, so `npm ci` does not download everything again.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=../lib/clean-room.sh
source .ci/lib/clean-room.sh

work=$(mktemp -d /tmp/mas-fresh-clone-XXXXXX)
trap 'rm -rf "$work"' EXIT

if [ "$(id -u)" -eq 0 ]; then
  user=${FRESH_CLONE_USER:-mas-ci}
  if ! id -u "$user" >/dev/null 2>&1; then
    useradd --create-home --shell /bin/bash "$user"
    echo "created the ordinary user $user"
  fi
  home=$(getent passwd "$user" | cut -d: -f6)
  cache=$(npm config get cache 2>/dev/null)
  if [ ! -d "$home/.npm/_cacache" ] && [ -d "$cache/_cacache" ]; then
    mkdir -p "$home/.npm"
    cp -a "$cache/_cacache" "$home/.npm/_cacache"
    chown -R "$user:" "$home/.npm"
  fi
  as_user() { runuser -u "$user" -- "$@"; }
else
  user=$(id -un)
  home=$HOME
  as_user() { "$@"; }
fi

fresh_clone "$work/repo"
bin=$(bare_path "$work/bin")
chown -R "$user:" "$work"
echo "fresh clone of $(git rev-parse --short HEAD) in $work/repo, owned by $user (uid $(id -u "$user")); PATH=$bin"

run() {
  as_user env -i HOME="$home" USER="$user" LANG=C.UTF-8 TMPDIR=/tmp PATH="$bin" \
    bash -c 'cd "$1" && shift && "$@"' _ "$work/repo" "$@"
}

if run bash -c 'command -v chromium || command -v cc || command -v make || command -v python3'; then
  echo "a browser or compiler is still on the PATH" >&2
  exit 1
fi

started=$SECONDS
run npm ci --no-audit --no-fund --prefer-offline
install_took=$((SECONDS - started))

started=$SECONDS
set +e
run npm test 2>&1 | tee "$work/test.log"
code=${PIPESTATUS[0]}
set -e
test_took=$((SECONDS - started))

echo "as $user: npm ci took ${install_took}s, npm test took ${test_took}s (exit $code)"
if [ "$code" -ne 0 ]; then
  echo "npm test failed for an ordinary user on a fresh clone" >&2
  exit 1
fi
grep -E '^Tests: ' "$work/test.log"

set +e
run npm run test:slow -- test/swagger-ui.slow-spec.ts 2>&1 | tee "$work/browser.log"
code=${PIPESTATUS[0]}
set -e
if [ "$code" -ne 0 ]; then
  echo "the browser test failed instead of skipping for an ordinary user on a fresh clone" >&2
  exit 1
fi
if ! grep -Eq '^SKIPPED test/swagger-ui.slow-spec.ts › Swagger UI in a real browser \([0-9]+ tests?\): needs a Chromium browser' "$work/browser.log"; then
  echo "npm run test:slow did not print the skip line of the browser test" >&2
  exit 1
fi
if ! grep -Eq '^Tests: .*[0-9]+ skipped' "$work/browser.log"; then
  echo "the browser tests were not counted as skipped" >&2
  exit 1
fi
echo "fresh clone, ordinary user: npm test passed, and the browser test printed its skip line"
