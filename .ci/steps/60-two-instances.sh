#!/usr/bin/env bash
# step: two replicas of the built service share one PostgreSQL, Redis and S3 store (and the Redis throttle tests, required)
# Uses the machine's Redis on 127.0.0.1:6379 when one answers; otherwise installs Debian's redis-server if
# needed and runs one of its own on a free loopback port for the length of this step.
set -euo pipefail
cd "$(dirname "$0")/../.."

export REQUIRE_REDIS=1
redis_pid=""
cleanup() { if [ -n "$redis_pid" ]; then kill "$redis_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

answers() { node -e "require('net').connect($1, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(1))"; }

if [ -z "${REDIS_TEST_URL:-}" ] && ! answers 6379; then
  if ! command -v redis-server >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  fi
  port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
  redis_pid=$!
  for _ in $(seq 50); do answers "$port" && break; sleep 0.1; done
  export REDIS_TEST_URL="redis://127.0.0.1:$port"
  echo "Started redis-server on $REDIS_TEST_URL for this step"
fi

node --test test/scale/two-instances.test.js
NODE_OPTIONS='--experimental-vm-modules --no-warnings=ExperimentalWarning' npx jest test/login-throttle-redis.slow-spec.ts
