"""Cases of the differential harness: generated collections written to files, built once.

A case is a scenario (which id shapes go where, see ``shapes.SCENARIOS``) drawn with a
seed, its qrels and run written in random layouts (see ``layouts.draw_layout``). In CI
the seed is fixed (``--differential-seed``); ``--big`` draws many more and larger cases
and adds files that span several Arrow blocks by their rows alone. The terminal summary
prints what was compared: ``N files, Q queries, V values compared, all equal``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from tests.differential.compare import TALLY
from tests.differential.layouts import Layout, Written, draw_layout, write
from tests.differential.shapes import BIG_SCENARIOS, SCENARIOS, Collection, Scenario, make_collection

VARIANTS = 2  # draws of each scenario in CI (one for those spread over blocks)
BIG_VARIANTS = 20
BIG_SCALE = 3  # --big: three times as many queries per collection


@dataclass(frozen=True)
class CaseSpec:
    """What to draw: a scenario, which draw, and whether the trec_eval command runs on it."""

    scenario: Scenario
    variant: int
    seed: int
    scale: int = 1

    @property
    def id(self) -> str:
        return f"{self.scenario.name}-{self.variant}"

    @property
    def cli(self) -> bool:
        """The first draw of each scenario also goes through ``serpeval trec_eval``."""
        return self.variant == 0


@dataclass
class Case:
    spec: CaseSpec
    coll: Collection
    qrels: Written
    run: Written

    @property
    def files(self) -> list[Path]:
        return [self.qrels.path, self.run.path]

    def rng(self, purpose: int) -> np.random.Generator:
        """A generator for one test's own draws (independent of the test order)."""
        return np.random.default_rng([self.spec.seed, self.spec.variant, purpose, *self.spec.id.encode()])


def case_specs(config: pytest.Config) -> list[CaseSpec]:
    big = config.getoption("--big")
    seed = config.getoption("--differential-seed")
    specs = []
    for scenario in SCENARIOS + (BIG_SCENARIOS if big else []):
        variants = (BIG_VARIANTS if big else VARIANTS) if not scenario.blocks else (3 if big else 1)
        if scenario in BIG_SCENARIOS:
            variants = 1
        scale = BIG_SCALE if big and not scenario.blocks else 1
        specs += [CaseSpec(scenario, v, seed, scale) for v in range(variants)]
    return specs


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``spec`` over every case; ``cli_spec``: those the command runs on;
    ``small_spec``: those not spread over Arrow blocks (their files are 45 MB)."""
    for name, keep in (("spec", lambda s: True), ("cli_spec", lambda s: s.cli),
                       ("small_spec", lambda s: not s.scenario.blocks)):
        if name in metafunc.fixturenames:
            specs = [s for s in case_specs(metafunc.config) if keep(s)]
            metafunc.parametrize(name, specs, ids=[s.id for s in specs])


_BUILT: dict[CaseSpec, Case] = {}


def build(spec: CaseSpec, folder: Path) -> Case:
    """Draw the collection of ``spec`` and write its two files (once per session)."""
    if spec not in _BUILT:
        rng = np.random.default_rng([spec.seed, spec.variant, *spec.scenario.name.encode()])
        coll = make_collection(spec.scenario, rng, spec.scale)
        here = folder / spec.id
        here.mkdir(parents=True, exist_ok=True)
        layouts = {}
        for kind in ("qrels", "run"):
            if kind in spec.scenario.blocks:  # keep the rows where the blocks need them
                layouts[kind] = Layout(eol=str(rng.choice(["lf", "crlf"])), bom=bool(rng.random() < 0.5),
                                       iter="Q0" if kind == "run" else "0")
            else:  # trec_eval 9.0.8 refuses comments in runs: none where the command runs
                layouts[kind] = draw_layout(rng, kind, comments=not (spec.cli and kind == "run"))
        qrels = write(here, "qrels.txt", coll, "qrels", layouts["qrels"], rng)
        run = write(here, "bm25.run", coll, "run", layouts["run"], rng)
        _BUILT[spec] = Case(spec, coll, qrels, run)
    return _BUILT[spec]


@pytest.fixture(scope="session")
def case_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("differential")


@pytest.fixture(scope="session", autouse=True)
def _tally_base(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Files are tallied by their path below this process's temporary folder: each pytest-xdist
    worker builds the collections its tests need in a folder of its own, and a collection built
    by both (the runs counted 332, 354 or 382 files by how the test files fell on the workers) is
    one file of the harness."""
    TALLY.base = tmp_path_factory.getbasetemp()


@pytest.fixture
def case(spec: CaseSpec, case_folder: Path) -> Case:
    return build(spec, case_folder)


@pytest.fixture
def cli_case(cli_spec: CaseSpec, case_folder: Path) -> Case:
    return build(cli_spec, case_folder)


@pytest.fixture
def small(small_spec: CaseSpec, case_folder: Path) -> Case:
    return build(small_spec, case_folder)


# The tally's hooks (counting failures, adding up pytest-xdist workers' tallies, the terminal
# summary) are in tests/conftest.py: under xdist the controller never loads this file.
