#!/usr/bin/env bash
# step: docs/sql/ is what the repositories run
# Regenerates docs/sql/*.repository.md (`npm run sql:generate`: every public repository method run with its
# example arguments on an embedded PostgreSQL of its own, docs/sql/README.md) and fails, showing the
# difference, when the checked-in files are not what the repositories send, or when a method has no example.
set -euo pipefail
cd "$(dirname "$0")/../.."
env -u DATABASE_URL npm run sql:generate --silent
git diff --exit-code -- docs/sql
untracked=$(git ls-files --others --exclude-standard -- docs/sql)
if [ -n "$untracked" ]; then
  printf 'Generated but not checked in:\n%s\n' "$untracked"
  exit 1
fi
