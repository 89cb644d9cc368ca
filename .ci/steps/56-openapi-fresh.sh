#!/usr/bin/env bash
# step: docs/openapi.json is the document the code serves
# Regenerates docs/openapi.json (`npm run openapi:generate`: dist/src/openapi-document.js, the document
# /api/docs-json serves, written without a database) and fails, showing the difference, when the checked-in file
# is not what the code produces, so that every change of the contract shows in review.
set -euo pipefail
cd "$(dirname "$0")/../.."
npm run openapi:generate --silent
git diff --exit-code -- docs/openapi.json
if [ -n "$(git ls-files --others --exclude-standard -- docs/openapi.json)" ]; then
  echo "Generated but not checked in: docs/openapi.json"
  exit 1
fi
