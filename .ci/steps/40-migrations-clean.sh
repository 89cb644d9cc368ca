#!/usr/bin/env bash
# step: the entities match the migrations: `npm run migration:generate -- <Name> --check` finds no change
set -euo pipefail
cd "$(dirname "$0")/../.."
npm run migration:generate --silent -- DriftCheck --check
