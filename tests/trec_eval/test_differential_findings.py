"""Regressions found by differential fuzzing against the C trec_eval 10.0 and 9.0.8 binaries.

Each expected output below is the C program's (checked by running it on the same files)
and is also worked out by hand in the comments, so the tests do not need the binaries.
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import pytest

from serpeval.cli.cmd_trec_eval import run


def trec_eval(args: list[str]) -> tuple[int, str, str]:
    out, err = io.BytesIO(), io.StringIO()
    status = run(args, stdout=out, stderr=err)
    return status, out.getvalue().decode("utf-8"), err.getvalue()


def _files(tmp_path: Path, qrels: str, run_: str) -> list[str]:
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run_)
    return [str(tmp_path / "qrels"), str(tmp_path / "run")]


@pytest.mark.parametrize("compat", ["10.0", "9.0.8"])
def test_set_f_uses_its_weight_exactly(tmp_path: Path, compat: str) -> None:
    """set_F.0.5 is (x+1) P R / (x P + R) with x = 0.5 itself, not sqrt(0.5) squared.

    Topic 1: 6 relevant docs, 5 retrieved of which 1 relevant: P = 1/5, R = 1/6,
    F = 1.5 * (1/5) * (1/6) / (0.5/5 + 1/6) = 0.05 / (4/15) = 0.1875 (exactly, in doubles).
    Topic 2: nothing relevant retrieved: 0. Mean = 0.09375 exactly, which printf's %6.4f
    rounds half to even: 0.0938 (both C binaries print that). With x = sqrt(0.5)**2 =
    0.5000000000000001 the mean lies an ulp below 0.09375 and printed 0.0937.
    """
    x = 0.5
    p, r = 1 / 5, 1 / 6
    topic_1 = (x + 1.0) * p * r / (x * p + r)  # m_set_F.c's expression, in its order
    assert "%6.4f" % ((topic_1 + 0.0) / 2) == "0.0938"
    files = _files(tmp_path,
                   "".join(f"1 0 r{i} 1\n" for i in range(1, 7)) + "2 0 x 1\n",
                   "1 Q0 r1 1 5 t\n" + "".join(f"1 Q0 n{i} {i + 1} {5 - i} t\n" for i in range(1, 5))
                   + "2 Q0 y 1 1 t\n")
    status, out, err = trec_eval(["--compat", compat, "-q", "-m", "set_F.0.5", *files])
    assert status == 0, err
    assert out == ("set_F_0.5             \t1\t0.1875\n"
                   "set_F_0.5             \t2\t0.0000\n"
                   "set_F_0.5             \tall\t0.0938\n")


def test_set_f_weight_zero_is_precision_and_default_is_f1(tmp_path: Path) -> None:
    """x = 0: (0+1) P R / (0 P + R) = P; x = 1 (bare set_F): 2PR/(P+R). Topic 1 above:
    P = 0.2, F1 = 2 * 0.2 * (1/6) / (0.2 + 1/6) = 0.0667 / 0.3667 = 0.181818..."""
    files = _files(tmp_path, "".join(f"1 0 r{i} 1\n" for i in range(1, 7)),
                   "1 Q0 r1 1 5 t\n" + "".join(f"1 Q0 n{i} {i + 1} {5 - i} t\n" for i in range(1, 5)))
    status, out, err = trec_eval(["-m", "set_F.0", *files])
    assert (status, out) == (0, "set_F_0               \tall\t0.2000\n"), err
    status, out, err = trec_eval(["-m", "set_F", *files])
    assert (status, out) == (0, "set_F                 \tall\t0.1818\n"), err


def test_9_0_8_scores_beyond_float32_are_inf_without_a_numpy_warning(tmp_path: Path) -> None:
    """9.0.8 stores scores as C floats: 1e39 (beyond FLT_MAX, about 3.4e38) becomes inf and
    ranks d2 above d1 (1e38); the relevant d1 is then at rank 2, AP = 1/2 (trec_eval 9.0.8
    prints 0.5000). serpeval printed NumPy's "overflow encountered in cast" warning, with a
    line of its own source, on stderr (an error under this test's warning filter)."""
    files = _files(tmp_path, "1 0 d1 1\n1 0 d2 0\n", "1 Q0 d1 1 1e38 t\n1 Q0 d2 2 1e39 t\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        status, out, err = trec_eval(["--compat", "9.0.8", "-q", "-m", "map", *files])
    assert (status, err) == (0, "")
    assert out == "map                   \t1\t0.5000\nmap                   \tall\t0.5000\n"


def test_debug_query_that_is_not_utf8_names_no_topic() -> None:
    """``-D 1.<qid>`` with a qid whose bytes are not UTF-8 (argv gives the surrogate escape
    '\\udcff' for the byte 0xff): no topic has that id, so trec_eval 10.0 and 9.0.8 say
    "No queries with both results and relevance info" and exit 7. serpeval ended with an
    internal error (Arrow refused the string), status 70."""
    cases = Path(__file__).parent / "fixtures" / "cases" / "ties"
    status, out, err = trec_eval(["-D", "1.\udcff", "-m", "map", str(cases / "qrels"), str(cases / "run")])
    assert (status, out) == (7, "")
    assert err.startswith("trec_eval: No queries with both results and relevance info")


@pytest.mark.parametrize(("param", "expected"), [
    ("1e300", ""),                   # (long) 1e300: LONG_MIN on x86-64, so nothing printed
    ("9223372036854775807", ""),     # atof gives 2^63, one past LONG_MAX: LONG_MIN again
    ("-1e300", ""),
    ("1e18", "10-"),                 # in range: the whole ranking (3 docs)
    ("2.9", "10"),                   # truncated to 2
])
def test_relstring_length_beyond_a_long(tmp_path: Path, param: str, expected: str) -> None:
    """relstring.N casts the double N to a C long (m_relstring.c: MIN((long) params[0],
    num_ret)). d1 (grade 1), d2 (grade 0), d3 (not judged: '-'). trec_eval 10.0 and 9.0.8
    print '' for N = 1e300; serpeval ended with "a number is too large", status 2."""
    files = _files(tmp_path, "1 0 d1 1\n1 0 d2 0\n", "1 Q0 d1 1 1.0 t\n1 Q0 d2 2 0.5 t\n1 Q0 d3 3 0.2 t\n")
    status, out, err = trec_eval(["-q", "-m", f"relstring.{param}", *files])
    assert status == 0, err
    assert out == f"{f'relstring_{param}':<22}\t1\t'{expected}'\n"


def test_all_row_of_negative_zeros_is_positive_zero(tmp_path: Path) -> None:
    """trec_eval's mean starts from +0.0 and adds each topic's value.

    Topic 1 judges d1, d2 as 0 (R = 0) and the run retrieves only unjudged x1, x2; -J drops
    them, so n = 0 and a = b = c = d = 0 (N = 0). utility.-1,-1,-1,-1 = (-1)(0) + (-1)(0) +
    (-1)(0) + (-1)(0) = -0.0, printed "-0.0000" by printf; the 'all' row is
    (0.0 + -0.0) / 1 = +0.0, "0.0000" (trec_eval 10.0 and 9.0.8 print exactly that).
    serpeval's cumulative sum kept the -0.0 and printed "-0.0000" there.
    """
    files = _files(tmp_path, "1 0 d1 0\n1 0 d2 0\n", "1 Q0 x1 1 1 t\n1 Q0 x2 2 0.5 t\n")
    for compat in ("10.0", "9.0.8"):
        status, out, err = trec_eval(["--compat", compat, "-q", "-J", "-m", "utility.-1,-1,-1,-1", *files])
        assert status == 0, err
        assert out == ("utility_-1,-1,-1,-1   \t1\t-0.0000\n"
                       "utility_-1,-1,-1,-1   \tall\t0.0000\n")
