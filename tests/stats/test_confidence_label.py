"""Every label of an interval's level says it exactly: a 97.5% interval was labelled "98% CI"
(compare's column and notes, the agreement and interleaving notes and JSON keys, the sweep's
sentence) or "97%" (the A/B notes truncated it), and the A/B table said "[95% CI]" whatever
--alpha was."""

from __future__ import annotations

import json

import numpy as np
import pytest

from serpeval.cli.app import main
from serpeval.stats.validation import confidence_label


@pytest.mark.parametrize(("confidence", "label"), [(0.95, "95%"), (1 - 0.025, "97.5%"), (0.9, "90%"),
                                                   (1 - 0.1, "90%"), (0.999, "99.9%"), (0.99, "99%")])
def test_the_label(confidence: float, label: str) -> None:
    assert confidence_label(confidence) == label


def test_compare_at_97_5(tmp_path, capsys) -> None:
    (tmp_path / "q").write_text("".join(f"q{i} 0 d{j} {int(j < 2)}\n" for i in range(8) for j in range(4)))
    (tmp_path / "a").write_text("".join(f"q{i} Q0 d{j} {j + 1} {4 - j} a\n" for i in range(8) for j in range(4)))
    (tmp_path / "b").write_text("".join(f"q{i} Q0 d{(j + i) % 4} {j + 1} {4 - j} b\n"
                                        for i in range(8) for j in range(4)))
    assert main(["compare", str(tmp_path / "q"), str(tmp_path / "a"), str(tmp_path / "b"), "-m", "AP",
                 "--confidence", "0.975"]) == 0
    out = capsys.readouterr().out
    assert "97.5% CI" in out
    assert "98% CI" not in out


def test_interleaving_keys_and_ab_header(tmp_path, capsys) -> None:
    from serpeval.online.interleaving.analysis import analyze_outcomes

    rng = np.random.default_rng(0)
    rows = analyze_outcomes(rng.choice([-1, 0, 1], 300), rng.integers(0, 40, 300), confidence=0.975,
                            n_resamples=200, rng=0).to_dicts()
    assert {"CI 97.5% low", "CI 97.5% high"} <= set(rows[0])
    assert main(["generate-logs", str(tmp_path / "ab"), "--users", "400"]) == 0
    capsys.readouterr()
    assert main(["ab", str(tmp_path / "ab"), "-m", "ctr", "--alpha", "0.025", "-f", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "effect [97.5% CI]" in out
    assert "relative [97.5% CI]" in out
    assert main(["ab", str(tmp_path / "ab"), "-m", "ctr", "--alpha", "0.025", "-f", "json"]) == 0
    rules = json.loads(capsys.readouterr().out)["rules"]
    assert any(rule.startswith("97.5% confidence intervals;") for rule in rules)  # it said 97%
