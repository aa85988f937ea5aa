#!/usr/bin/env bash
# Install serpeval with everything its tests need, then run the test suite.
# Usage: scripts/test.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(python3 -c 'import sys; print(sys.prefix == sys.base_prefix)')" = True ]; then
    echo "scripts/test.sh: installing serpeval and its test dependencies into $(command -v python3) (not a virtual environment; python3 -m venv .venv && . .venv/bin/activate first is recommended)" >&2
else
    echo "scripts/test.sh: installing serpeval and its test dependencies into the virtual environment $(python3 -c 'import sys; print(sys.prefix)')" >&2
fi
python3 -m pip install --quiet --upgrade pip
# Pinned to the versions the suite is known to pass with (constraints/test.txt); the lowest
# allowed versions are tested by scripts/test-lowest.sh, the latest by scripts/test-latest.sh.
# The docs extra too: the suite builds the documentation site in strict mode (mkdocs.yml).
python3 -m pip install --quiet -e '.[test,docs]' -c constraints/test.txt
# The HTML report test drives Debian's Chromium through Playwright (never a browser download).
# As root, Chromium is installed system-wide through apt; say so before doing it.
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "scripts/test.sh: running as root: installing Debian's chromium system-wide (apt-get install -y chromium) for the browser test" >&2
    apt-get install -y -qq chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
        || echo "scripts/test.sh: could not install chromium; the browser test will be skipped" >&2
fi
# The event-store tests (tests/online/events, tests/serve) use a real PostgreSQL on 127.0.0.1:5432
# (trust auth, database test) and skip where none listens. As root, with Debian's postgresql
# cluster installed but stopped, start it (and create the database test if missing).
if ! (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null && [ "$(id -u)" = 0 ] && command -v pg_lsclusters >/dev/null 2>&1; then
    cluster=$(pg_lsclusters --no-header | awk 'NR == 1 {print $1, $2}')
    if [ -n "$cluster" ]; then
        echo "scripts/test.sh: running as root, nothing on 127.0.0.1:5432: starting PostgreSQL cluster $cluster (pg_ctlcluster) for the event-store tests" >&2
        # shellcheck disable=SC2086  # "VERSION NAME", two words on purpose
        pg_ctlcluster $cluster start || echo "scripts/test.sh: could not start PostgreSQL; its tests will be skipped" >&2
        su postgres -c "psql -qc 'CREATE DATABASE test'" >/dev/null 2>&1 || true
    fi
fi
# pip built serpeval's compiled kernels with the machine's C compiler (hatch_build.py); where
# there is one, a kernel library that failed to build fails tests/core/test_native.py (else skipped).
if command -v "${CC:-cc}" >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1; then
    export SERPEVAL_EXPECT_NATIVE=1
fi
python3 -m ruff check --quiet src tests bench
# The layers of docs/architecture.md (import-linter contracts in pyproject.toml) and the types.
lint-imports --no-cache >/dev/null || lint-imports --no-cache
python3 -m mypy
# SERPEVAL_STATIC_ONLY=1 stops here: the install and the static checks, no tests. .ci/run does
# this while its latest-versions step finishes, then runs this script whole: the install is then
# a no-op (~3 s) and mypy reads its cache (.mypy_cache: 13 s cold, 0.2 s warm).
if [ "${SERPEVAL_STATIC_ONLY:-0}" = 1 ]; then
    exit 0
fi
# The examples in the library's docstrings (src/conftest.py leaves out the spark modules where
# pyspark is not installed).
python3 -m pytest --doctest-modules src/serpeval -q -p no:cacheprovider
# The library's bytecode, written once: where the environment sets PYTHONDONTWRITEBYTECODE (as
# Docker's Python images and this project's CI machines do), Python writes no .pyc files, and each
# of the hundreds of `python -m serpeval` processes the tests start compiled serpeval's modules
# from source again (~0.08 s of CPU a process; tests/faults/test_memory_limit.py 40 -> 34 s).
# Reading .pyc files is not turned off by that variable; they go to the git-ignored __pycache__.
python3 -m compileall -q src/serpeval
# Hypothesis's derandomized `ci` profile (tests/conftest.py): the same examples on every run.
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}
# Both cores (pytest-xdist) where there are two or more; coverage of the library, with its
# floor ([tool.coverage.report] fail_under in pyproject.toml).
workers=$(python3 -c 'import os; print(min(len(os.sched_getaffinity(0)), 2))')
parallel=()
if [ "$workers" -ge 2 ]; then
    parallel=(-n "$workers")
fi
# Coverage slows the CPU-bound tests (+65% on tests/measures, evaluation and core together);
# SERPEVAL_COVERAGE=0 runs without it (and without its floor).
coverage=(--cov --cov-report=term)
if [ "${SERPEVAL_COVERAGE:-1}" = 0 ]; then
    coverage=()
fi
# On Python 3.12+ coverage can trace through sys.monitoring, which stops paying for a line once
# it is recorded. The whole suite, same machine, summed (wall): 3.12.1 with it 513 s (278 s);
# 3.12.1 with coverage's C tracer 677 s (370 s); 3.11.7 (C tracer, the only one there) 616 s
# (340 s). Line coverage only ([tool.coverage.run] branch = false: with branches, coverage falls
# back to its C tracer before Python 3.14).
if python3 -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
    export COVERAGE_CORE=${COVERAGE_CORE:-sysmon}
fi
# The 40 slowest tests are listed, and tests/conftest.py sums their share of the suite's time.
exec python3 -m pytest ${parallel[@]+"${parallel[@]}"} ${coverage[@]+"${coverage[@]}"} --durations=40 "$@"
