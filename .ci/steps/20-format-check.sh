#!/usr/bin/env bash
# step: every file is formatted by Prettier (npm run format:check)
set -euo pipefail
cd "$(dirname "$0")/../.."
npm run format:check
