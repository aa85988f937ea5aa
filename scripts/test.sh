#!/usr/bin/env bash
# Install serpeval with everything its tests need, then run the test suite.
# Usage: scripts/test.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --upgrade pip
python3 -m pip install --quiet -e '.[test]'
# The HTML report test drives Debian's Chromium through Playwright (never a browser download).
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get install -y -qq chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
        || echo "scripts/test.sh: could not install chromium; the browser test will be skipped" >&2
fi
python3 -m ruff check --quiet src tests bench
# The layers of docs/architecture.md (import-linter contracts in pyproject.toml) and the types.
lint-imports --no-cache >/dev/null || lint-imports --no-cache
python3 -m mypy
exec python3 -m pytest "$@"
