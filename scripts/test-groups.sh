#!/usr/bin/env bash
# Which groups of tests this machine can run, and why not the others. One place for both uses:
#   scripts/test-groups.sh strict    exit 1 at once, naming every missing part (.ci/run: CI has them all)
#   scripts/test-groups.sh summary   one line after `make test`: which groups did not run and why
# The groups: tests on Postgres (TEST_DATABASE_URL), tests against Redis (REDIS_URL), the
# WEB_CONCURRENCY cluster tests (both), browser checks (Debian's chromium), the PHP SDK's tests
# (php with ext-curl, and phpunit), and the durability tests that start and kill a private Postgres
# (its server binaries).
set -uo pipefail
mode="${1:-summary}"
chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
pg_bin="/usr/lib/postgresql/15/bin"

missing=()
if [ -z "${TEST_DATABASE_URL:-}" ]; then
  missing+=("Postgres tests (TEST_DATABASE_URL is not set)")
fi
if [ -z "${REDIS_URL:-}" ]; then
  missing+=("Redis tests (REDIS_URL is not set)")
fi
if [ -z "${TEST_DATABASE_URL:-}" ] || [ -z "${REDIS_URL:-}" ]; then
  missing+=("WEB_CONCURRENCY cluster tests (they need both Postgres and Redis)")
fi
if [ ! -x "$chromium" ]; then
  missing+=("browser checks (no chromium at $chromium)")
fi
if ! command -v phpunit >/dev/null || ! php -r 'exit(extension_loaded("curl") ? 0 : 1);' 2>/dev/null; then
  missing+=("PHP SDK tests (no php with ext-curl, or no phpunit)")
fi
if [ ! -x "$pg_bin/initdb" ] || [ ! -x "$pg_bin/pg_ctl" ]; then
  missing+=("private-Postgres durability tests (no initdb/pg_ctl in $pg_bin)")
fi

if [ "${#missing[@]}" -eq 0 ]; then
  [ "$mode" = "summary" ] && echo "test groups: all ran (PGlite, Postgres, Redis, cluster, browser, PHP, private Postgres)"
  exit 0
fi
joined="$(printf '%s; ' "${missing[@]}")"
joined="${joined%; }"
if [ "$mode" = "strict" ]; then
  echo "ci: refusing to run a smaller suite; missing: $joined" >&2
  exit 1
fi
echo "test groups NOT run: $joined"
exit 0
