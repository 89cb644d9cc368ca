#!/usr/bin/env bash
# step: the served OpenAPI document passes Redocly's recommended rules with no error and no warning
# Builds, writes the document without a database (dist/src/openapi-document.js, the same document as
# /api/docs-json), then lints it with the rules in redocly.yaml and the exceptions in .redocly.lint-ignore.yaml.
set -euo pipefail
cd "$(dirname "$0")/../.."
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true

npm run build --silent
node dist/src/openapi-document.js dist/openapi.json
# Human-readable problems first, then the totals: redocly fails on errors only, this step on warnings too.
npx --no-install redocly lint --format=stylish
npx --no-install redocly lint --format=json 2>/dev/null | node -e '
  let text = "";
  process.stdin.on("data", (chunk) => (text += chunk)).on("end", () => {
    const { totals } = JSON.parse(text);
    console.log(`OpenAPI lint: ${totals.errors} errors, ${totals.warnings} warnings, ${totals.ignored} ignored with a reason`);
    process.exit(totals.errors === 0 && totals.warnings === 0 ? 0 : 1);
  });'
