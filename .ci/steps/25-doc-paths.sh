#!/usr/bin/env bash
# step: every repository file a doc (README.md, docs/) or a source comment names exists
# scripts/doc-paths.js says what counts as a named path (code spans and links in the docs, the words of the
# comments that look like a repository path); its own tests run first. About a second, with no build.
set -euo pipefail
cd "$(dirname "$0")/../.."
node --test --test-reporter=dot scripts/doc-paths.test.js
node scripts/doc-paths.js
