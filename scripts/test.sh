#!/usr/bin/env bash
# Install serpeval with everything its tests need, then run the test suite.
# Usage: scripts/test.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --upgrade pip
python3 -m pip install --quiet -e '.[test]'
exec python3 -m pytest "$@"
