"""serpeval reading files == pytrec_eval given dicts of the same rows: every value, per query.

Every numeric value pytrec_eval computes (all of trec_eval 9.0.8's ``all_trec``: 92 per
query) is compared as a double, through ``serpeval.evaluate`` on the files of every case,
and through the ``serpeval trec_eval`` command's printed output on the first draw of each
scenario (default relevance level, ``-l2`` and ``-J``).
"""

from __future__ import annotations

import io
import math
import subprocess
import sys
from pathlib import Path

import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from tests.differential import oracle  # noqa: E402
from tests.differential.compare import TALLY, Tally  # noqa: E402
from tests.differential.conftest import Case, build, case_specs  # noqa: E402

from serpeval.cli.cmd_trec_eval import run as trec_eval  # noqa: E402
from serpeval.core import native  # noqa: E402


@pytest.mark.parametrize("kernels", ["compiled", "numpy"])
def test_evaluate_on_files_equals_pytrec_eval(case: Case, kernels: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the compiled kernels (where built) and through the NumPy code that replaces
    them where no C compiler was found."""
    if kernels == "numpy":
        monkeypatch.setattr(native, "available", lambda: False)
    elif not native.available():
        pytest.skip("the compiled kernels are not built here (the numpy case covers this machine)")
    theirs = oracle.reference(case.coll)
    assert set(theirs) == case.coll.evaluated_queries  # the generator's own bookkeeping
    assert len(theirs) >= 3
    ours = oracle.serpeval_values(case.qrels.path, case.run.path)
    oracle.compare(f"evaluate vs pytrec_eval ({kernels})", ours, theirs, case.files,
                   f"{case.spec.id} ({case.qrels.layout.name} / {case.run.layout.name})")


def printed(argv: list[str]) -> tuple[dict[str, dict[str, str]], str]:
    """``serpeval trec_eval argv`` (its main function): per topic ``{name: text}``, and stderr."""
    out, err = io.BytesIO(), io.StringIO()
    status = trec_eval(argv, stdout=out, stderr=err)
    assert status == 0, err.getvalue()
    return parse(out.getvalue()), err.getvalue()


def parse(output: bytes) -> dict[str, dict[str, str]]:
    """trec_eval's ``name <tab> topic <tab> value`` lines (split on LF only: ids may hold U+2028)."""
    table: dict[str, dict[str, str]] = {}
    for line in output.split(b"\n"):
        if line:
            name, topic, value = line.decode("utf-8").split("\t")
            table.setdefault(topic, {})[name.strip()] = value
    return table


def as_printed(value: float) -> str:
    """How trec_eval prints a double (``%.4f``; NaN as C's printf writes it)."""
    return "-nan" if math.isnan(value) else f"{value:.4f}"


@pytest.mark.parametrize("flags", [[], ["-l2"], ["-J"]], ids=["default", "l2", "J"])
def test_trec_eval_command_equals_pytrec_eval(cli_case: Case, flags: list[str]) -> None:
    case = cli_case
    theirs = oracle.reference(case.coll, rel_level=2 if "-l2" in flags else 1, judged_only="-J" in flags)
    table, _ = printed(["--compat", "9.0.8", "-q", "-m", "all_trec", *flags,
                        str(case.qrels.path), str(case.run.path)])
    summary = table.pop("all")
    problems = []
    values = 0
    assert set(table) == set(theirs)
    for q, want in theirs.items():
        for name, value in want.items():
            if name in oracle.GEOMETRIC:
                continue  # trec_eval prints gm_map and gm_bpref in the summary only
            if math.isnan(value):
                continue  # -J leaves nothing judged retrieved: trec_eval's 0/0, serpeval's documented 0
            text = table[q].get(name)
            values += 1
            expected = str(int(value)) if name.startswith("num_") else as_printed(value)
            if text != expected:
                problems.append(f"{name} of {q!r}: printed {text!r}, pytrec_eval {value!r}")
    # The summary: means (sums for num_*, geometric means for gm_*) of pytrec_eval's values.
    # trec_eval adds in its own order, so a mean may differ in its last bit: the printed
    # number must be the reference rounded to 4 decimals (either neighbour at a tie).
    for name in oracle.trec_names():
        per_query = [theirs[q][name] for q in sorted(theirs)]
        if "-J" in flags and any(math.isnan(v) for v in per_query):
            continue  # trec_eval's 0/0 with nothing judged retrieved
        want = pytrec_eval.compute_aggregated_measure(name, per_query)
        values += 1
        if abs(float(summary[name]) - want) > 0.5e-4 + 1e-9:
            problems.append(f"{name} of all: printed {summary[name]!r}, mean of pytrec_eval's {want!r}")
    assert summary["num_q"] == str(len(theirs))
    assert summary["runid"] == case.run.tag  # the tag of the run's last line
    TALLY.add("trec_eval command vs pytrec_eval", case.files, len(theirs), values + 2, len(problems))
    assert not problems, f"{case.spec.id} {flags}: {len(problems)} of {values} differ:\n  " + "\n  ".join(problems[:12])


def test_console_command_prints_what_the_function_prints(request: pytest.FixtureRequest, case_folder) -> None:
    """The installed entry point (``python -m serpeval trec_eval``) on one case, in a subprocess."""
    spec = next(s for s in case_specs(request.config) if s.cli and s.scenario.name == "every_shape")
    case = build(spec, case_folder)
    argv = ["--compat", "9.0.8", "-q", "-m", "all_trec", str(case.qrels.path), str(case.run.path)]
    done = subprocess.run([sys.executable, "-m", "serpeval", "trec_eval", *argv], capture_output=True, check=True)
    table, _ = printed(argv)
    assert parse(done.stdout) == table
    theirs = oracle.reference(case.coll)
    first = sorted(theirs)[0]
    assert table[first]["map"] == as_printed(theirs[first]["map"])
    TALLY.add("console entry point = main function", case.files, len(theirs), sum(len(v) for v in table.values()))


def test_compare_refuses_to_have_compared_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness's comparison fails when the reference gives it no value to compare."""
    monkeypatch.setattr(oracle, "TALLY", Tally())  # kept out of the session's summary
    with pytest.raises(AssertionError, match="compared no value"):
        oracle.compare("self-check", {}, {}, [], "an empty reference")
    with pytest.raises(AssertionError, match="compared no value"):
        oracle.compare("self-check", {"q1": {}}, {"q1": {}}, [], "a reference without measures")


def test_a_file_built_by_both_workers_counts_once(tmp_path: Path) -> None:
    """Each pytest-xdist worker builds the collections its tests need below its own temporary
    folder; the controller's tally counts such a collection once, by its path below the folder,
    and a file outside the folder by its whole path."""
    workers = []
    for name in ("popen-gw0", "popen-gw1"):
        tally = Tally(base=tmp_path / name)
        tally.add("check", [tmp_path / name / "differential0" / "every_shape-0" / "qrels.txt",
                            tmp_path / name / f"only-{name}.run"], 1, 1)
        workers.append(tally.shared())
    controller = Tally()
    for shared in workers:
        controller.merge(shared)
    outside = tmp_path / "elsewhere.run"
    controller.add("check", [outside], 1, 1)
    assert sorted(controller.files) == sorted(["differential0/every_shape-0/qrels.txt", "only-popen-gw0.run",
                                               "only-popen-gw1.run", str(outside)])
    assert controller.summary().startswith("4 files, 3 queries, 3 values compared")
