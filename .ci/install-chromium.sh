#!/usr/bin/env bash
# Installs Debian's Chromium for the Swagger UI browser test (test/swagger-ui.slow-spec.ts).
# Idempotent: does nothing when /usr/bin/chromium is already there. Never downloads a browser any other way.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends chromium
/usr/bin/chromium --version
