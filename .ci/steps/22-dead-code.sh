#!/usr/bin/env bash
# step: no dead export, file or dependency (knip, configured in knip.jsonc)
# An export nothing imports (and its own file does not use), a file no program reaches, or a package nothing
# uses fails the step; a few seconds, no build.
set -euo pipefail
cd "$(dirname "$0")/../.."
npm run knip --silent
