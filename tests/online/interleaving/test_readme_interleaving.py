"""The docs' null example under "Decide a winner" (docs/how-to/interleaving.md, moved there
from the README by issue 33) is the code's output.

The block runs as written (its seeds fix every draw) and must print exactly the ``text``
block that follows it. Its numbers are checked against references elsewhere: the t-tests
against scipy (``test_interleaving_bias.py``), the level of every test in null experiments
(``test_interleaving_null.py``); here only that the README shows what the code prints, and
that what it prints is a null result.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "interleaving.md"


def _example() -> tuple[str, str]:
    """The python block with ``analyze_outcomes(outcomes, units=users`` in the "Decide a
    winner" section and the text block right after it."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Decide a winner"):]
    end = section.find("\n## ", 1)  # the next section, or the end of the page
    section = section if end < 0 else section[:end]
    blocks = re.findall(r"```(\w+)\n(.*?)```", section, flags=re.S)
    for i, (lang, body) in enumerate(blocks):
        if lang == "python" and "analyze_outcomes(outcomes, units=users" in body:
            assert blocks[i + 1][0] == "text", "the example's output block must follow it"
            return body, blocks[i + 1][1]
    raise AssertionError("README's 'Decide a winner' section lost its null example")


def test_readme_null_example_is_the_code_output() -> None:
    code, expected = _example()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    assert out.getvalue() == expected
    # a null example: no test rejects at 0.05, no winner
    p_values = [float(p) for p in re.findall(r"\bp (\d\.\d+)", expected)]
    assert len(p_values) == 2
    assert min(p_values) > 0.05
    assert expected.rstrip().endswith("winner: none")
