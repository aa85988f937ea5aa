#!/usr/bin/env bash
# The lowest allowed versions: install serpeval with every direct dependency (and the pandas,
# polars and plot extras) at the lower bound pyproject.toml declares (scripts/lowest_versions.py),
# in a virtual environment of its own, then run `serpeval demo` and a smoke subset of the
# tests. CI runs it after scripts/test.sh (.ci/run); about 1-3 minutes with a warm pip cache.
# Usage: scripts/test-lowest.sh [pytest arguments]    (venv: $SERPEVAL_LOWEST_VENV, default build/venv-lowest)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${SERPEVAL_LOWEST_VENV:-build/venv-lowest}
PINS=$(mktemp)
trap 'rm -f "$PINS"' EXIT
python3 scripts/lowest_versions.py --extras pandas,polars,plot >"$PINS"
# the test runner itself at the main run's versions
grep -E '^(pytest|hypothesis)==' constraints/test.txt >>"$PINS"
echo "scripts/test-lowest.sh: installing serpeval with the lowest allowed versions into $VENV:" $(grep -v -E '^(pytest|hypothesis)==' "$PINS") >&2
python3 -m venv --clear "$VENV"
# shellcheck disable=SC1091
. "$VENV/bin/activate"
python3 -m pip install --quiet --upgrade pip
python3 -m pip install --quiet -c "$PINS" -e '.[pandas,polars,plot]' pytest hypothesis
# The pins are constraints: a dependency pip could not hold at its lower bound fails the
# install above; say what was installed, for the log.
python3 -m pip list --format=freeze 2>/dev/null | grep -i -E "^($(cut -d= -f1 "$PINS" | paste -sd'|'))==" | paste -sd' ' >&2
DEMO=$(mktemp -d)
(cd "$DEMO" && serpeval demo -o "$DEMO/report.html" >/dev/null)
rm -rf "$DEMO"
echo "scripts/test-lowest.sh: serpeval demo: ok" >&2
# Fast tests over the readers, ranking, the measures' formulas, JSON, the CLI's refusals (a
# clean exit after an input error: pyarrow 17 aborted there) and the pandas/polars inputs; the
# demo above covered ibis/DuckDB, scipy and the HTML report. (Tests that need the oracles of
# the test extra, statsmodels, pytrec_eval, or pyspark are not among them.) The simulator's
# power plot covers matplotlib.
exec python3 -m pytest -q -p no:cacheprovider -k 'not spark' \
    tests/io/test_trec.py tests/io/test_native_reader.py tests/io/test_tables.py tests/io/test_value_domains.py \
    tests/test_ranking.py tests/measures/test_formulas.py tests/core/test_json_strict.py tests/cli/test_cli_core.py \
    tests/online/simulation/test_simulate.py::test_report_rows_and_plot "$@"
