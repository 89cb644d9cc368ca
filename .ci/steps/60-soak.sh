#!/usr/bin/env bash
# step: 60 s of mixed reads and writes at full speed (loopback): zero errors, zero unexpected statuses, RSS at the end within 20 % of after warm-up
set -euo pipefail
cd "$(dirname "$0")/../.."
env -u DATABASE_URL npm run soak
