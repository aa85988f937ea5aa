"""The documentation site (issue 33): it builds in strict mode, its references are generated
from the code and complete, and the README stays short and points into it.

``mkdocs build --strict`` fails on a broken link, a missing anchor, a nav entry without a
page, a page outside the nav that is not declared so, and a warning of mkdocstrings. The
generated pages (docs/gen/reference.py) are read here through the same function the build
hook calls.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _load(name: str) -> ModuleType:
    path = ROOT / "docs" / "gen" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"docs_gen_{name}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


reference = _load("reference")


@pytest.fixture(scope="module")
def generated() -> dict[str, str]:
    return reference.pages()


def _untraced(run: Callable[[], None]) -> None:
    """``run()`` with this thread's trace function off, when coverage is measuring (``--cov``).
    The build runs MkDocs, its plugins, Markdown and Pygments, none of them measured
    (``source_pkgs`` is serpeval) but traced all the same: a tracer call per line they run,
    two fifths of the build's CPU. The only serpeval code a build runs is the hook's
    ``reference.pages()``, computed outside (the ``generated`` fixture), so the coverage data
    is the same. Coverage's tracer is put back as ``settrace(gettrace())`` does (coverage.py
    supports it), on this thread only: other threads are left alone."""
    try:
        import coverage
    except ImportError:
        run()
        return
    tracer = sys.gettrace()
    if tracer is None or coverage.Coverage.current() is None:
        run()
        return
    sys.settrace(None)
    try:
        run()
    finally:
        sys.settrace(tracer)


def test_site_builds_in_strict_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    caplog: pytest.LogCaptureFixture, generated: dict[str, str]) -> None:
    """``mkdocs build --strict``, in this process (the test run has imported most of what the
    build imports). Strict mode fails the build on any warning the ``mkdocs`` logger passes
    on, so that logger must pass warnings: ``mkdocs build --strict --quiet`` sets it to ERROR
    and builds a site with a broken link without a word (mkdocs 1.6).

    The build hook's ``reference.pages()`` returns the pages the ``generated`` fixture computed
    with that same function in this process (the other tests read them too): they are
    generated once, not once more for the build."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]')")
    pytest.importorskip("material", reason="mkdocs-material is not installed (pip install -e '.[docs]')")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed (pip install -e '.[docs]')")
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort

    monkeypatch.chdir(ROOT)
    # The search plugin's index of every page (a third of a second, an eighth of the build) is
    # not what this test checks, and its indexing logs nothing: the plugin stays in the build
    # (its configuration is still validated, search/search_index.json still written) with
    # an empty index.
    from material.plugins.search.plugin import SearchIndex

    monkeypatch.setattr(SearchIndex, "add_entry_from_context", lambda self, page: None)
    # docs/gen/hooks.py imports ``reference`` by that name when mkdocs loads it (below)
    monkeypatch.setitem(sys.modules, "reference", reference)
    monkeypatch.setattr(reference, "pages", lambda: generated)
    config = load_config(str(ROOT / "mkdocs.yml"), strict=True, site_dir=str(tmp_path / "site"))
    with caplog.at_level(logging.WARNING, logger="mkdocs"), warnings.catch_warnings():
        warnings.resetwarnings()  # Python's defaults, as ``python -m mkdocs`` has, not the test run's "error"
        for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
            warnings.simplefilter("ignore", category)
        assert logging.getLogger("mkdocs").isEnabledFor(logging.WARNING)  # else strict mode counts nothing
        try:
            _untraced(lambda: build(config))
            failure = ""
        except Abort as exc:
            failure = f"{exc}\n" + "\n".join(f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records
                                               if r.levelno >= logging.WARNING)
    assert not failure, failure
    site = tmp_path / "site"
    assert (site / "index.html").is_file()
    assert (site / "reference" / "measures" / "nDCG" / "index.html").is_file()
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    import serpeval

    assert serpeval.evaluate.__doc__ is not None
    first_line = serpeval.evaluate.__doc__.splitlines()[0]
    assert first_line in api  # mkdocstrings rendered the docstrings
    assert ":func:" not in api  # reStructuredText roles are dropped (docs/gen/hooks.py)
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "--max-drop" in cli


def test_the_committed_reference_pages_are_current(generated: dict[str, str]) -> None:
    """The generated pages are committed (readable on a code host, linked from the README);
    the build regenerates them, and here the committed copies must equal what the code says."""
    outdated = reference.stale(generated)
    assert not outdated, "generated pages out of date (a command, option, measure or public name changed): " + \
        ", ".join(f"docs/{p}" for p in outdated) + "; refresh them with: python docs/gen/reference.py --write"


def test_every_measure_has_matrix_metadata() -> None:
    """A new measure fills family, user_model, grades, use_when and unjudged in its spec (the
    matrix shows 'not described yet' until then)."""
    missing = reference.missing_metadata()
    assert not missing, "measures lacking metrics-matrix metadata (fields of their MeasureSpec): " + \
        "; ".join(f"{name}: {', '.join(fields)}" for name, fields in missing.items())


def test_every_measure_has_a_page_and_a_matrix_row(generated: dict[str, str]) -> None:
    from serpeval.measures import REGISTRY

    matrix = generated["explanation/metrics-matrix.md"]
    index = generated["reference/measures/index.md"]
    for spec in REGISTRY:
        slug = reference.measure_slug(spec.name)
        page = generated[f"reference/measures/{slug}.md"]
        assert page.startswith(f"# {spec.name}\n")
        assert spec.summary in page
        for p in spec.params:
            assert f"| `{p.name}` | {reference._cell(p.describe())} |" in page
        for name in spec.trec:
            assert f"`{name}`" in page
        assert f"[{spec.name}](../reference/measures/{slug}.md)" in matrix
        assert f"]({slug}.md)" in index
    assert reference.MISSING not in matrix
    # families are groups of the matrix, in registry order of their first member
    families = [spec.family for spec in REGISTRY]
    headings = re.findall(r"^## (.+)$", matrix, flags=re.M)
    assert headings == ["Every family at a glance", *dict.fromkeys(families)]


def test_the_matrix_tolerates_a_measure_without_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    from serpeval.measures import REGISTRY

    bare = SimpleNamespace(**{**{f: getattr(REGISTRY.specs[0], f) for f in ("name", "cutoff")},
                              "family": "", "user_model": "", "grades": "", "use_when": "", "unjudged": ""})
    monkeypatch.setattr(reference, "_specs", lambda: [bare])
    assert reference.missing_metadata() == {bare.name: list(reference.MATRIX_FIELDS)}
    assert reference.MISSING in reference.matrix_page()


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [o for a in parser._actions for o in a.option_strings if not isinstance(a, argparse._HelpAction)]


def test_the_cli_reference_has_every_command_and_option(generated: dict[str, str]) -> None:
    from serpeval.cli.app import build_parser
    from serpeval.cli.commands import COMMANDS

    page = generated["reference/cli.md"]
    commands = reference._subcommands(build_parser())
    assert [row.name for row in COMMANDS] == list(commands)
    for row in COMMANDS:
        section = page.split(f"## {row.name} {{#{row.name}}}", 1)[1].split("\n## ", 1)[0]
        if row.name == "trec_eval":
            assert "-q, --query_eval_wanted" in section
            continue
        for option in _options(commands[row.name]):
            assert f"`{option}`" in section, f"{row.name} {option} is missing from the CLI reference"


def test_the_errors_page_has_every_status_and_error_class(generated: dict[str, str]) -> None:
    from serpeval.cli import failures
    from serpeval.core import errors

    page = generated["reference/errors.md"]
    for status in (failures.EXIT_ERROR, failures.EXIT_INTERRUPTED, failures.EXIT_PIPE, failures.EXIT_INTERNAL,
                   failures.EXIT_NOTHING_EVALUATED):
        assert re.search(rf"\b{status}\b", page), status
    for name in errors.__all__:
        assert f"| `{name}` |" in page


def test_links_outside_docs_are_copied_and_checked(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]')")
    hooks = _load("hooks")
    page = SimpleNamespace(file=SimpleNamespace(src_uri="how-to/x.md", abs_src_path=str(ROOT / "docs/how-to/x.md")))
    text = "[p](../../bench/results/production.md) [a](../architecture.md)\n```\n[f](../../nope.md)\n```\n"
    out = hooks.on_page_markdown(text, page, None, None)
    assert "[p](../repo/bench/results/production.md)" in out  # copied under repo/ in the site
    assert "[a](../architecture.md)" in out                   # inside docs/: left alone
    assert "[f](../../nope.md)" in out                        # code is not a link
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.serpeval"):
        hooks.on_page_markdown("[gone](../../bench/results/no-such-file.md)", page, None, None)
    assert "not a file of the repository" in caplog.text


def test_a_page_missing_from_the_nav_joins_its_section(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]')")
    hooks = _load("hooks")
    for folder in ("how-to", "explanation"):
        (tmp_path / folder).mkdir()
    for page in ("how-to/a.md", "how-to/new.md", "explanation/b.md"):
        (tmp_path / page).write_text("# x\n", encoding="utf-8")
    nav = [{"Home": "index.md"}, {"How-to guides": [{"A": "how-to/a.md"}]}, {"Explanation": ["explanation/b.md"]}]
    assert hooks.missing_from_nav(nav, tmp_path) == {"How-to guides": ["how-to/new.md"]}
    (tmp_path / "loose.md").write_text("# y\n", encoding="utf-8")
    assert hooks.missing_from_nav(nav, tmp_path) == {"How-to guides": ["how-to/new.md"], "More": ["loose.md"]}
    # and the real site: every page of the four folders is in the nav once the hook has run
    import yaml

    config = {"nav": yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]}
    hooks.on_config(config)
    assert hooks.missing_from_nav(config["nav"]) == {}


# --------------------------------------------------------------------------- the README


def test_readme_is_short_and_links_into_the_site() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    assert sum(link.startswith("docs/") for link in links) >= 15
    for link in links:
        if not re.match(r"^[a-z]+:", link):
            assert (ROOT / link).exists(), f"README links to {link}, which does not exist"


def test_readme_figures_link_to_the_bench_results_they_come_from() -> None:
    """Every README paragraph or list item that quotes a speed-up (``5.7x faster``) or a timing
    links to a file under bench/results."""
    text = README.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    paragraphs = re.split(r"\n\s*\n|\n(?=[*-] )", text)
    figures = [p for p in paragraphs if re.search(r"\d(\.\d+)?x (faster|as many|fewer)|\d+(\.\d+)? s\b", p)]
    assert figures, "the README quotes no speed figure"
    for paragraph in figures:
        assert re.search(r"\]\(bench/results/[^)]+\)", paragraph), \
            f"a README figure without its bench/results link: {paragraph.strip()[:200]}"


#: The sections of the README before issue 33 and the pages they moved to (the checklist of
#: the move: nothing lost). Each page must exist, be in the site's nav, and hold the section's text.
MOVED = {
    "Set up (two commands on a fresh machine)": ("how-to/install.md", "scripts/test.sh"),
    "Evaluate": ("how-to/evaluate.md", "Inputs: TREC qrels"),
    "Errors, exit statuses and output files": ("how-to/evaluate.md", "written atomically"),
    "Measure names": ("how-to/measure-names.md", "One grammar everywhere"),
    "Rules (trec_eval's, each a named option)": ("explanation/ties-and-unjudged.md", "judged-but-unjudged"),
    "Exit codes and machine output": ("how-to/evaluate.md", "null_reasons"),
    "Speed": ("explanation/speed.md", "bench/bench_core.py"),
    "The production shape: a million queries, ten results each": ("explanation/speed.md", "bench_production.py"),
    "Runs larger than memory": ("how-to/large-runs.md", "--stream"),
    "Evaluate on Spark": ("how-to/spark.md", "sp.evaluate"),
    "Drop-in trec_eval": ("how-to/trec-eval.md", "deliberately differs from trec_eval 10.0"),
    "Compare systems": ("how-to/compare.md", "Fisher's sign-flip test"),
    "Where did it change? Per-group breakdowns (`--groups`)": ("how-to/groups.md", "builtin:relevant"),
    "Gate a ranking change in CI": ("how-to/gate.md", "non-inferiority"),
    "Reports": ("how-to/reports.md", "Content-Security-Policy"),
    "Judgments: pool, check coverage, diff": ("how-to/pool-and-coverage.md", "move-to-front"),
    "Assessor agreement and qrels from clicks": ("how-to/agreement-and-click-qrels.md", "Krippendorff"),
    "Online evaluation: interleaving and click models": ("how-to/interleaving.md", "One sign convention"),
    "Interleave at serving time": ("how-to/interleaving.md", "Bias under random clicks"),
    "Decide a winner": ("how-to/interleaving.md", "preference_matrix"),
    "Click models": ("how-to/click-models.md", "stop_requires_click"),
    "How many queries does interleaving save? (`serpeval simulate`)": ("how-to/sensitivity.md", "--generate"),
    "Speed (online)": ("explanation/speed.md", "bench_online.py"),
    "A/B tests": ("how-to/ab.md", "Triggered analysis"),
}


def test_every_former_readme_section_lives_in_the_site() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for section, (page, text) in MOVED.items():
        path = ROOT / "docs" / page
        assert path.is_file(), f"README section {section!r} moved to docs/{page}, which is missing"
        assert text in path.read_text(encoding="utf-8"), f"docs/{page} lost the README section {section!r}"
        assert f": {page}\n" in nav, f"docs/{page} is not in the site's nav"


def test_the_screenshot_script_records_terminal_output_as_svg(tmp_path: Path) -> None:
    """scripts/screenshots.py draws what a command prints, colours kept, as a terminal SVG
    (the report PNG needs Chromium and is redrawn by hand: python scripts/screenshots.py)."""
    path = ROOT / "scripts" / "screenshots.py"
    spec = importlib.util.spec_from_file_location("screenshots", path)
    assert spec is not None
    assert spec.loader is not None
    screenshots = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(screenshots)
    text, status = screenshots.terminal_output(["measures", "nDCG"], tmp_path)
    assert status == 0
    assert text.startswith("nDCG: normalised DCG")
    svg = screenshots.to_svg("\x1b[1;31mFAIL\x1b[0m nDCG@10 0.4463\n", "$ serpeval gate")
    assert svg.startswith("<svg")
    assert "FAIL" in svg
    assert "0.4463" in svg
    assert "font-weight: bold" in svg  # the ANSI style survived
    for name in screenshots.TERMINAL:  # the pictures the pages show are committed
        assert (ROOT / "docs" / "img" / f"{name}.svg").is_file()


def test_the_worked_example_on_measure_pages_is_right(generated: dict[str, str]) -> None:
    """The example section's numbers, worked by hand: grades in ranked order 2, unjudged, 1, 0;
    judged grades 2, 1, 1 (d5 not retrieved) and 0."""
    import math

    idcg = 2 + 1 / math.log2(3) + 1 / math.log2(4)
    ndcg = generated["reference/measures/nDCG.md"]
    assert f"| `nDCG` | {(2 + 1 / math.log2(4)) / idcg:.4f} |" in ndcg
    assert f"| `nDCG(judged_only=True)` | {(2 + 1 / math.log2(3)) / idcg:.4f} |" in ndcg  # d4 removed
    # AP: relevant at ranks 1 and 3 of 3 relevant: (1/1 + 2/3) / 3
    assert f"| `AP` | {(1 + 2 / 3) / 3:.4f} |" in generated["reference/measures/AP.md"]
    assert f"| `P@3` | {2 / 3:.4f} |" in generated["reference/measures/P.md"]
    assert "| `RR` | 1.0000 |" in generated["reference/measures/RR.md"]
    assert "subtopic qrels" in generated["reference/measures/alpha_nDCG.md"]
