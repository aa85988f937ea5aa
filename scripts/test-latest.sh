#!/usr/bin/env bash
# The latest allowed versions: install serpeval with every optional extra (spark, pandas,
# polars, plot) and pytest, unpinned (pip takes the newest release each bound allows), in a
# virtual environment of its own, and run the tests that exercise the extras. It reports
# what breaks and exits 0 (informative: constraints/test.txt pins the run that must pass); with
# SERPEVAL_LATEST_STRICT=1 it exits with pytest's status instead.
# Usage: scripts/test-latest.sh [pytest arguments]    (venv: $SERPEVAL_LATEST_VENV, default build/venv-latest)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${SERPEVAL_LATEST_VENV:-build/venv-latest}
echo "scripts/test-latest.sh: installing serpeval with the latest allowed versions into $VENV" >&2
python3 -m venv --clear "$VENV"
# shellcheck disable=SC1091
. "$VENV/bin/activate"
strict=${SERPEVAL_LATEST_STRICT:-0}
# An install that fails (a registry that does not answer, a resolution conflict) is reported
# like a failing test: informative unless strict.
if ! { python3 -m pip install --quiet --upgrade pip \
       && python3 -m pip install --quiet --upgrade --upgrade-strategy eager -e '.[spark,pandas,polars,plot]' pytest hypothesis; }; then
    echo "scripts/test-latest.sh: could not install the latest allowed versions (see pip's message above);" \
         "informative only" >&2
    [ "$strict" = 1 ] && exit 1
    exit 0
fi
# What changed against the pinned main run: every package whose version differs.
python3 -m pip freeze --exclude-editable 2>/dev/null | grep -v -i '^serpeval' | sort >"$VENV/freeze.txt"
grep -v '^#' constraints/test.txt | sort | comm -13 - "$VENV/freeze.txt" | paste -sd' ' \
    | sed 's/^/scripts\/test-latest.sh: newer than constraints\/test.txt: /' >&2 || true
status=0
python3 -m pytest -q -p no:cacheprovider \
    tests/spark tests/io/test_tables.py tests/core/test_notebook_display.py tests/online/simulation/test_simulate.py "$@" || status=$?
if [ "$status" != 0 ]; then
    echo "scripts/test-latest.sh: the latest allowed versions break the tests above (pytest exit $status);" \
         "informative only: pin or fix, see docs/dependencies.md" >&2
fi
if [ "$strict" = 1 ]; then
    exit "$status"
fi
exit 0
