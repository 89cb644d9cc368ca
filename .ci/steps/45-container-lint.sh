#!/usr/bin/env bash
# step: Dockerfile and docker-compose.yml pass their linters (no Docker engine needed) and keep their promises
# Dockerfile: dockerfile-utils (npm) must report nothing; compose: Debian's docker-compose validates the file
# against the Compose schema (`config` needs no engine). Then the promises of docs/containers.md: Node 24,
# a non-root final stage with a HEALTHCHECK that carries only package.json, node_modules and dist/, and a
# compose file that never puts the database password into a URL.
set -euo pipefail
cd "$(dirname "$0")/../.."

DOCKERFILE_UTILS=dockerfile-utils@0.16.3
fail() {
  echo "container check failed: $*" >&2
  exit 1
}

lint=$(npm exec --loglevel=error --yes --package="$DOCKERFILE_UTILS" -- dockerfile-utils lint Dockerfile 2>&1) || fail "Dockerfile: $lint"
[ -z "$lint" ] || fail "Dockerfile has lint findings: $lint"
echo "Dockerfile: $DOCKERFILE_UTILS reports nothing"

final_stage=$(awk '/^FROM /{stage=""} {stage=stage $0 "\n"} END{printf "%s", stage}' Dockerfile)
grep -q '^ARG NODE_IMAGE=node:24-' Dockerfile || fail "the image is not based on Node 24"
grep -q '^USER node$' <<<"$final_stage" || fail "the final stage does not run as the node user"
grep -q '^HEALTHCHECK ' <<<"$final_stage" || fail "the final stage has no HEALTHCHECK"
copied=$(grep '^COPY ' <<<"$final_stage" | awk '{print $NF}' | sort | tr '\n' ' ')
[ "$copied" = "./ ./dist ./node_modules " ] || fail "the final stage copies more than package.json, node_modules and dist: $copied"
grep -q -- '--from=deps .*/app/package.json' <<<"$final_stage" || fail "package.json does not come from the deps stage"
grep -q 'npm ci --omit=dev' Dockerfile || fail "production dependencies are not installed with --omit=dev"
echo "Dockerfile: Node 24, non-root, HEALTHCHECK, final stage = package.json + production node_modules + dist/"

if ! command -v docker-compose >/dev/null; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
fi
marker="Pw-$RANDOM@:/%#-marker"
resolved=$(env -i PATH="$PATH" POSTGRES_PASSWORD="$marker" JWT_SECRET="$(printf 'j%.0s' {1..40})" \
  docker-compose --project-directory . -f docker-compose.yml config) || fail "docker-compose.yml is invalid"
echo "docker-compose.yml: valid ($(docker-compose version --short))"
grep -qF -- "$marker" <<<"$resolved" || fail "the database password does not reach the compose services"
if grep -E '://' <<<"$resolved" | grep -qF -- "$marker"; then
  fail "docker-compose.yml puts the database password into a URL"
fi
if env -i PATH="$PATH" docker-compose --project-directory . -f docker-compose.yml config -q 2>/dev/null; then
  fail "docker-compose.yml accepts a missing POSTGRES_PASSWORD / JWT_SECRET"
fi
echo "docker-compose.yml: the password is passed on its own (never in a URL); missing secrets are refused"
