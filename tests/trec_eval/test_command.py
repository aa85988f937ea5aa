"""``serpeval trec_eval``: options, exit codes, stdin, warnings, help, and output properties."""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serpeval.cli.cmd_trec_eval import run
from serpeval.trec_eval.options import TrecEvalError, parse_options

CASES = Path(__file__).parent / "fixtures" / "cases"
QRELS = str(CASES / "ties" / "qrels")
RUN = str(CASES / "ties" / "run")


def trec_eval(args: list[str]) -> tuple[int, str, str]:
    out, err = io.BytesIO(), io.StringIO()
    status = run(args, stdout=out, stderr=err)
    return status, out.getvalue().decode("utf-8"), err.getvalue()


# ----------------------------------------------------------------------------- options


def test_getopt_spellings_are_equivalent() -> None:
    reference = trec_eval(["-q", "-m", "P.5,10", "-c", "-l", "2", "-M", "50", QRELS, RUN])[1]
    for args in (["-qc", "-mP.5,10", "-l2", "-M50", QRELS, RUN],
                 [QRELS, "-q", RUN, "--measure=P.5,10", "-c", "--level_for_rel", "2", "-M", "50"],
                 ["--query_eval_wanted", "--meas", "P.5,10", "--complete", "-l2", "--Max=50",
                  QRELS, RUN],
                 ["-q", "-m", "P.5,10", "-c", "-l2x", "-M", "50", "--", QRELS, RUN]):
        status, out, err = trec_eval(args)
        assert (status, out) == (0, reference), (args, err)


@pytest.mark.parametrize(("args", "message"), [
    (["-x", QRELS, RUN], "invalid option -- 'x'"),
    (["-m"], "option requires an argument -- 'm'"),
    (["--nosuch", QRELS, RUN], "unrecognized option '--nosuch'"),
    (["--Num", "5", QRELS, RUN], None),          # unique prefix of --Number_docs_in_coll
    (["--Re", "qrels", QRELS, RUN], "is ambiguous"),  # --Rel_info_format or --Results_format
    (["--compat", "8", QRELS, RUN], "--compat must be one of 10.0, 9.0.8"),
    ([QRELS], "Usage: trec_eval"),
])
def test_usage_errors_exit_1(args: list[str], message: str | None) -> None:
    status, out, err = trec_eval(args)
    if message is None:
        assert status == 0, err
        return
    assert status == 1
    assert out == ""
    assert message in err


def test_options_are_read_with_atol() -> None:
    opts = parse_options(["-l2.7", "-M", "10x", "-N", "-5", "-D", "1.301"])
    assert (opts.rel_level, opts.depth, opts.collection_size) == (2, 10, -5)
    assert (opts.debug_level, opts.debug_query) == (1, "301")
    with pytest.raises(TrecEvalError):
        parse_options(["--measure"])


def test_every_option_sets_its_field() -> None:
    opts = parse_options(["-hvqcJn", "-Rqrels", "-T", "trec_results", "-Zz", "-oold", "-mmap",
                          "--compat=9.0.8", "a", "b"])
    assert (opts.help, opts.version, opts.per_query, opts.complete, opts.judged_only,
            opts.summary) == (True, True, True, True, True, False)
    assert (opts.rel_format, opts.results_format, opts.zscores) == ("qrels", "trec_results", "z")
    assert (opts.measures, opts.compat, opts.files) == (["map"], "9.0.8", ["a", "b"])


# ----------------------------------------------------------------------------- exit codes


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(("args", "status", "message"), [
    (["-m", "nosuch"], 1, "illegal measure 'nosuch'"),
    (["-m", "P."], 1, "improper measure in parameter 'P'"),
    (["-m", "prefs_simp"], 1, "does not support"),
    (["-m", "P.0,5"], 2, "cutoffs of P must be positive"),
    (["-m", "P.5,5"], 2, "duplicate cutoffs"),
    (["-m", "iprec_at_recall.0.1,.1"], 2, "duplicate cutoffs"),
    (["-m", "ndcg.1=3,,2=4"], 2, "malformed pair parameters"),
    (["-m", "ndcg.1"], 2, "malformed pair parameters"),
    (["-m", "utility.1,2,3"], 4, "utility takes 4 coefficients"),
    (["-m", "set_F.-1"], 2, "cannot be negative"),
    (["-m", "rbp.p=1.5"], 2, "must be a number in [0, 1]"),
    (["-l", "-1"], 1, "-l must be >= 0"),
    (["-l", "9007199254740992"], 1, "-l must be at most 9007199254740991 (2^53 - 1), the largest grade"),
    (["-N", "-5"], 1, "-N must be a number of docs from 0 to 9007199254740991"),
    (["-m", "iprec_at_recall.1.5"], 2, "the 'recall' parameter of IPrec must be a number in [0, 1]"),
    (["-m", "set_F.1e300"], 2, "beta squared and must be at most 1e200"),
    (["-M", "0"], 1, "-M must be a positive number"),
    (["-M", "abc"], 1, "-M must be a positive number of docs (got 'abc', read as 0)"),  # atol's reading, said
    (["-R", "prefs"], 2, "not supported"),
    (["-T", "other"], 2, "Illegal retrieval results format"),
    (["-Z", "zscores"], 1, "not supported"),
    (["--compat", "9.0.8", "-m", "rbp"], 1, "new in trec_eval 10.0"),
])
def test_measure_and_option_errors(args: list[str], status: int, message: str) -> None:
    got, out, err = trec_eval([*args, QRELS, RUN])
    assert (got, out) == (status, "")
    assert message in err


@pytest.mark.parametrize(("measures", "named"), [
    (["-m", "map"], "map"), (["-m", "runid", "-m", "map"], "map"), (["-m", "num_q", "-m", "P.5"], "P"),
    (["-m", "relstring", "-m", "map"], "map"), (["-m", "P.5", "-m", "map"], "map"),
    (["-m", "all_trec"], "num_ret"), ([], "num_ret"),
])
def test_duplicate_docs_name_the_measure_trec_eval_computes_first(tmp_path: Path, measures: list[str],
                                                                 named: str) -> None:
    """trec_eval 10.0's message names the first measure of its fixed order that reads the
    ranking (runid and num_q do not), as the C program printed for each of these."""
    qrels = _write(tmp_path, "qrels", "1 0 a 1\n")
    run = _write(tmp_path, "run", "1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 a 3 1 r\n")
    status, out, err = trec_eval([*measures, qrels, run])
    assert (status, out) == (4, "")
    assert err.endswith(f"trec_eval: Can't calculate measure '{named}'\n")


def test_input_errors(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "qrels", "1 0 a 1\n1 0 b 0\n")
    cases = {
        "malformed": ("1 Q0 a 1 1.0 r\n1 Q0 b 2 0.5\n", 2, ":2: expected 6 columns"),
        "empty": ("", 2, "the run has no data lines"),
        "blank lines only": ("\n\n", 7, "No queries with both results and relevance"),
        "not a number": ("1 Q0 a 1 high r\n", 2, "expected a number in column 5"),
        "duplicate": ("1 Q0 a 1 1.0 r\n1 Q0 a 2 0.5 r\n", 4, "is retrieved twice"),
        "no common topic": ("2 Q0 a 1 1.0 r\n", 7, "No queries with both results and relevance"),
    }
    for name, (text, status, message) in cases.items():
        got, out, err = trec_eval([qrels, _write(tmp_path, "run", text)])
        assert (got, out) == (status, ""), name
        assert message in err, (name, err)
    got, _, err = trec_eval([str(tmp_path / "nope"), qrels])
    assert got == 2
    assert "no such file" in err
    got, _, err = trec_eval([_write(tmp_path, "dq", "1 0 a 1\n1 0 a 0\n"),
                             _write(tmp_path, "r", "1 Q0 a 1 1 r\n")])
    assert got == 4
    assert "judged twice" in err


@pytest.mark.parametrize("text", ["\n", "# only a header\n", "\n# a header\n\n"])
def test_a_run_of_blank_or_comment_lines_retrieved_nothing(tmp_path: Path, text: str) -> None:
    """As trec_eval 10.0 reads it: with -c every judged topic counts 0 (the C program printed
    these rows, status 0); an empty file is refused by both (test above)."""
    qrels = _write(tmp_path, "qrels", "1 0 a 1\n2 0 b 1\n")
    status, out, err = trec_eval(["-c", "-q", "-m", "map", "-m", "num_ret", qrels, _write(tmp_path, "run", text)])
    assert (status, err) == (0, "")
    assert out == "".join(f"{m:<22}\t{q}\t{v}\n" for m, q, v in [
        ("num_ret", "1", "0"), ("map", "1", "0.0000"), ("num_ret", "2", "0"), ("map", "2", "0.0000"),
        ("num_ret", "all", "0"), ("map", "all", "0.0000")])


def test_comments_are_refused_in_9_0_8_only(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "qrels", "1 0 a 1\n")
    runf = _write(tmp_path, "run", "# header\n1 Q0 a 1 1.0 r\n")
    assert trec_eval([qrels, runf])[0] == 0
    status, _, err = trec_eval(["--compat", "9.0.8", qrels, runf])
    assert status == 2
    assert "comment lines are not allowed" in err


# ----------------------------------------------------------------------------- behaviour


def test_missing_topics_are_skipped_with_one_warning() -> None:
    qrels, runf = str(CASES / "missing" / "qrels"), str(CASES / "missing" / "run")
    status, out, err = trec_eval(["-q", "-m", "num_q", "-m", "map", qrels, runf])
    assert status == 0
    assert err.count("\n") == 1
    assert "2 of 5 topics in the qrels have no results in the run and were skipped" in err
    assert "num_q                 \tall\t3\n" in out
    # -c: no warning, the missing topics count (10.0 prints their rows, 9.0.8 does not).
    for compat, rows in (("10.0", 5), ("9.0.8", 3)):
        status, out, err = trec_eval(["--compat", compat, "-c", "-q", "-m", "map", "-m", "num_q",
                                      qrels, runf])
        assert status == 0
        assert err == ""
        assert out.count("map                   \t5") == rows
        assert "num_q                 \tall\t5\n" in out


def test_run_from_stdin_equals_run_from_file(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = trec_eval(["-q", "-m", "all_trec", QRELS, RUN])[1]
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(RUN).read_bytes())))
    assert trec_eval(["-q", "-m", "all_trec", QRELS, "-"])[1] == expected


def test_debug_query_evaluates_one_topic() -> None:
    status, out, _ = trec_eval(["-q", "-D", "0.102", "-m", "map", QRELS, RUN])
    assert status == 0
    assert {line.split("\t")[1] for line in out.splitlines()} == {"102", "all"}


def test_version_and_help() -> None:
    status, out, err = trec_eval(["-v"])
    assert (status, out) == (0, "")
    assert err.startswith("trec_eval version 10.0 (serpeval ")
    status, out, err = trec_eval(["-h", "-m", "rbp", "-m", "P"])
    assert status == 0
    for text in ("--compat 10.0", "is skipped, as in 9.0.8", "rbp uses its clean definition",
                 "num_rel's 'all' row", "\nP  (serpeval: P;", "\nrbp  (serpeval: RBP;"):
        assert text in out
    assert "No measures indicated" in trec_eval(["-h"])[1]


def test_console_script_and_module_entry(tmp_path: Path) -> None:
    """``python -m serpeval trec_eval`` and the console script read stdin, exit as trec_eval."""
    expected = trec_eval(["-m", "official", QRELS, RUN])[1]
    done = subprocess.run([sys.executable, "-m", "serpeval", "trec_eval", QRELS, "-"],
                          input=Path(RUN).read_bytes(), capture_output=True, check=False)
    assert (done.returncode, done.stdout.decode()) == (0, expected)
    script = "from serpeval.cli.cmd_trec_eval import main; main()"
    done = subprocess.run([sys.executable, "-c", script, "-m", "nosuch", QRELS, RUN],
                          capture_output=True, check=False)
    assert done.returncode == 1
    assert b"illegal measure" in done.stderr


# ----------------------------------------------------------------------------- properties

LINE = re.compile(r"^(?P<name>\S+ *)\t(?P<qid>\S+)\t(?P<value>.*)$")


@st.composite
def collections(draw):
    """TREC qrels and run text: grades -1..3, few distinct scores (ties), odd ids."""
    topics = draw(st.lists(st.sampled_from(["1", "01", "b", "Q-2", "é", "10"]), min_size=1,
                           max_size=4, unique=True))
    qrels, runs = [], []
    for t in topics:
        docs = draw(st.lists(st.sampled_from([f"d{i}" for i in range(15)]), min_size=1,
                             max_size=10, unique=True))
        qrels += [f"{t} 0 {d} {draw(st.integers(-1, 3))}" for d in docs]
        ranked = draw(st.lists(st.sampled_from([f"d{i}" for i in range(15)]), min_size=1,
                               max_size=12, unique=True))
        runs += [f"{t} Q0 {d} 0 {draw(st.integers(0, 5)) / 2} tag" for d in ranked]
    return qrels, runs


@settings(max_examples=25, deadline=None)
@given(data=collections(), seed=st.integers(0, 2**32 - 1),
       flags=st.sampled_from([[], ["-c"], ["-J"], ["-l2"], ["-M", "3"], ["--compat", "9.0.8"]]))
def test_output_parses_back_and_ignores_line_order(tmp_path_factory, data, seed, flags) -> None:
    qrels, runs = data
    folder = tmp_path_factory.mktemp("prop")
    args = ["-q", "-m", "all_trec", *flags]
    (folder / "q").write_text("\n".join(qrels) + "\n")
    (folder / "r").write_text("\n".join(runs) + "\n")
    status, out, err = trec_eval([*args, str(folder / "q"), str(folder / "r")])
    if status == 7:  # no topic in common without -c
        assert "No queries" in err
        return
    assert status == 0, err
    shuffled_q, shuffled_r = qrels[:], runs[:]
    rng = random.Random(seed)
    rng.shuffle(shuffled_q)
    rng.shuffle(shuffled_r)
    (folder / "q2").write_text("\n".join(shuffled_q) + "\n")
    (folder / "r2").write_text("\n".join(shuffled_r) + "\n")
    # The runid is the tag of the last line: every line has the same tag here.
    assert trec_eval([*args, str(folder / "q2"), str(folder / "r2")])[1] == out
    topics = {line.split()[0] for line in qrels}
    for line in out.splitlines():
        match = LINE.match(line)
        assert match, line
        name, qid, value = match["name"], match["qid"], match["value"]
        assert len(name) >= 22
        assert (len(name) == 22 or not name.endswith(" "))
        assert qid == "all" or qid in topics
        if name.startswith("relstring"):
            assert re.fullmatch(r"'[0-9>.\-<]*'", value)
        elif name.strip() == "runid":
            assert value == "tag"
        elif name.startswith("num_"):
            assert re.fullmatch(r"\d+", value)
        else:
            assert re.fullmatch(r"-?\d+\.\d{4}", value), line


def test_progress_on_a_terminal_leaves_stdout_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Large runs show a transient phase spinner on a terminal's stderr; stdout is unchanged."""
    import serpeval.cli.cmd_trec_eval as te

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    expected = trec_eval(["-q", "-m", "map", QRELS, RUN])[1]
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(te, "LONG_INPUT", 0)
    out = io.BytesIO()
    assert te.run(["-q", "-m", "map", QRELS, RUN], stdout=out) == 0
    assert out.getvalue().decode() == expected
    assert "trec_eval: " in terminal.getvalue()


def test_c_clears_missing_topics_parameterised_set_measures() -> None:
    """10.0 -c: a topic absent from the run has no retrieved set, whatever the parameters."""
    qrels, runf = str(CASES / "missing" / "qrels"), str(CASES / "missing" / "run")
    status, out, _ = trec_eval(["-c", "-q", "-m", "utility.2,-1,0,0", "-m", "relstring.3",
                                "-m", "rbp_resid.p=0.5", qrels, runf])
    assert status == 0
    for topic in ("503", "505"):  # judged, absent from the run
        rows = [line.split("\t") for line in out.splitlines() if line.split("\t")[1] == topic]
        assert {(name.strip(), value) for name, _, value in rows} == {
            ("utility_2,-1,0,0", "0.0000"), ("relstring_3", "''"), ("rbp_resid_p=0.5", "0.0000")}


# ----------------------------------------------------------------------------- formatting

TIES = [0.0, 1.0, 0.5, 1 / 32, 0.00005, 0.00015, 0.99995, 0.12345, 0.33335, 9.99995, 9.99994,
        10.0, 123.456789, -0.0, -0.00004, -1 / 3, float("inf"), float("-inf"), float("nan"),
        2.0**-30, 0.1 + 0.2, 1 - 2**-53]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(TIES)
                | st.integers(0, 200_000).map(lambda k: k / 20_000), max_size=50))
def test_fixed4_is_printf_6_4f(values: list[float]) -> None:
    """The vectorised ``%6.4f`` equals C's (Python's ``%`` rounds the exact binary value, as
    glibc's printf does), also on rounding ties and outside [0, 10)."""
    import numpy as np

    from serpeval.trec_eval.output import fixed4

    values = [*TIES, *values]
    assert fixed4(np.array(values)).to_pylist() == ["%6.4f" % v for v in values]  # noqa: UP031


def test_a_measure_name_that_is_not_utf8_keeps_its_bytes_padded_to_22_bytes(tmp_path: Path) -> None:
    """``-m $'utility.\\xff,1,0,0'`` was an internal UnicodeEncodeError. trec_eval 10.0 (built
    from github:usnistgov/trec_eval v10.0) prints the argument's own bytes, padded by printf's
    ``%-22s`` to 22 *bytes*: ``utility_\\xff,1,0,0`` is 15 bytes, so 7 blanks follow (seen
    with ``od -c`` on the binary's output). The value: utility a,b,c,d is
    a*rel_ret + b*nonrel_ret + c*rel_nonret + d*nonrel_nonret, with a = atof("\\xff...") = 0
    and b = 1: the non-relevant documents retrieved, 1 in q1 (d3) and 1 in q2 (d9, unjudged),
    mean 1.0.
    """
    (tmp_path / "q").write_text("q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d1 1\n")
    (tmp_path / "r").write_text("q1 Q0 d3 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d1 3 1.0 r\nq2 Q0 d9 1 1.0 r\n"
                                "q2 Q0 d1 2 0.5 r\n")
    out, err = io.BytesIO(), io.StringIO()
    name = b"utility.\xff,1,0,0".decode("utf-8", "surrogateescape")  # how Python hands over such argv
    assert run(["-m", name, str(tmp_path / "q"), str(tmp_path / "r")], stdout=out, stderr=err) == 0, err.getvalue()
    assert out.getvalue() == b"utility_\xff,1,0,0" + b" " * 7 + b"\tall\t1.0000\n"


def test_numbers_of_thousands_of_digits_saturate_as_c_atol_does() -> None:
    """glibc's atol saturates at LONG_MAX / LONG_MIN; Python's int() refused more than 4,300
    digits with an internal ValueError (exit 70). A cutoff at LONG_MAX stays refused (the
    documented deviation: serpeval's ranks are int64), now with trec_eval's exit status 2."""
    from serpeval.measures.cparse import LONG_MAX, LONG_MIN, atol

    assert atol("9" * 5000) == LONG_MAX
    assert atol(" -" + "9" * 5000 + "x") == LONG_MIN
    assert atol("0" * 5000 + "42") == 42
    assert atol("\u0661\u0660") == 0  # C's isdigit is ASCII: Arabic-Indic digits are not digits
    status, out, err = trec_eval(["-m", "P." + "9" * 5000, QRELS, RUN])
    assert (status, out) == (2, "")
    assert "cutoffs of P must be below 9223372036854775807" in err


def test_an_unknown_measure_ends_with_1_before_any_file_is_read(tmp_path: Path) -> None:
    """trec_eval marks the -m names while reading its options: ``trec_eval -m nosuch
    /nonexistent /nonexistent`` exits 1 ("illegal measure"), never 2 for the missing file;
    ``--compat 9.0.8 -m rbp`` likewise (rbp is new in 10.0), whatever the run holds."""
    missing = str(tmp_path / "nonexistent")
    status, out, err = trec_eval(["-m", "nosuch", missing, missing])
    assert (status, out, err) == (1, "", "trec_eval: illegal measure 'nosuch'\n")
    status, _, err = trec_eval(["--compat", "9.0.8", "-m", "rbp.p=0.5", missing, missing])
    assert status == 1
    assert err.startswith("trec_eval: illegal measure 'rbp.p=0.5'")


def test_serpeval_debug_before_trec_eval_keeps_trec_eval_s_syntax(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The internal-error line says "Rerun with --debug", but `serpeval --debug trec_eval -m map
    Q R` sent trec_eval's flags to serpeval's parser ("unrecognized arguments: -m map ...").
    Now --debug before the command is serpeval's and the rest is trec_eval's, as without it."""
    from serpeval.cli.app import main

    (tmp_path / "q").write_text("q1 0 a 1\nq1 0 b 0\n")
    (tmp_path / "r").write_text("q1 Q0 b 1 2.0 x\nq1 Q0 a 2 1.0 x\n")
    args = ["trec_eval", "-q", "-m", "map", str(tmp_path / "q"), str(tmp_path / "r")]
    assert main(args) == 0
    plain = capsys.readouterr().out
    assert main(["--debug", *args]) == 0
    # by hand: a (relevant) at rank 2 of 2, AP = (1/2) / 1
    assert capsys.readouterr().out == plain == "".join(f"map                   \t{q}\t0.5000\n" for q in ("q1", "all"))
