#!/usr/bin/env bash
# step: npm ci on a fresh clone with no cc, g++, make or python3 on PATH (no dependency builds from source)
# PATH holds Node, npm and a shell only (bare_path, .ci/lib/clean-room.sh). A package that falls back to node-gyp fails
# here. Afterwards the password hasher's native binding must load and hash.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=../lib/clean-room.sh
source .ci/lib/clean-room.sh

work=$(mktemp -d /tmp/mas-no-compiler-XXXXXX)
trap 'rm -rf "$work"' EXIT
fresh_clone "$work/repo"
bin=$(bare_path "$work/bin")

run() { (cd "$work/repo" && env -u DATABASE_URL -u NODE_OPTIONS PATH="$bin" "$@"); }
for tool in cc gcc g++ c++ make python3 node-gyp; do
  if run bash -c "command -v $tool" >/dev/null; then
    echo "$tool is still on the PATH" >&2
    exit 1
  fi
done
echo "PATH=$bin: no cc, gcc, g++, c++, make, python3 or node-gyp"
run npm ci --no-audit --no-fund --prefer-offline --loglevel=error
run node --input-type=module -e "
  import { hash, verify } from '@node-rs/argon2';
  const phc = await hash('no compiler needed', { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 });
  if (!phc.startsWith('\$argon2id\$v=19\$') || !(await verify(phc, 'no compiler needed'))) process.exit(1);
  console.log('argon2id hashes and verifies: ' + phc.slice(0, 30) + '…');
"
echo "npm ci passed without a compiler on Node $(run node --version)"
