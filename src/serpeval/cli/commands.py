"""The command table of ``serpeval``: one row per command (name, module, one-line help).

``serpeval --help`` lists the commands from this table alone, importing none of their
modules; ``serpeval CMD ...`` imports only ``CMD``'s module, whose ``register(subparsers)``
builds its own subparser (with the help line read from here, :func:`summary`) and sets
``func`` on it (:func:`serpeval.cli.app.build_parser`). Adding a command is one module plus
one row here. This module imports nothing of serpeval: the table costs nothing to read.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["COMMANDS", "Command", "command", "names", "summary"]


class Command(NamedTuple):
    """One ``serpeval`` command: its name on the command line, the module that registers and
    runs it, and the one line that ``serpeval --help`` shows for it."""

    name: str
    module: str
    help: str


#: Every command, in the order ``serpeval --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("evaluate", "serpeval.cli.cmd_evaluate", "evaluate runs against qrels"),
    Command("measures", "serpeval.cli.cmd_measures", "list the measures"),
    Command("demo", "serpeval.cli.cmd_demo",
            "run the whole tool on a generated collection (no data needed)"),
    Command("compare", "serpeval.cli.cmd_compare", "compare runs with significance tests"),
    Command("gate", "serpeval.cli.cmd_gate",
            "CI gate: fail when a candidate run is worse than the baseline"),
    Command("trec_eval", "serpeval.cli.cmd_trec_eval",
            "drop-in trec_eval 10.0 / 9.0.8: same flags, same output (serpeval trec_eval -h)"),
    Command("ab", "serpeval.cli.cmd_ab", "analyse an A/B test from search logs (DuckDB or Spark)"),
    Command("interleaving-report", "serpeval.cli.cmd_interleaving_report",
            "decide between two rankers from an interleaving log"),
    Command("serve", "serpeval.cli.cmd_serve",
            "run a live interleaving or A/B experiment over HTTP, storing UBI events"),
    Command("replay", "serpeval.cli.cmd_replay",
            "recompute the teams of every impression serve logged and list rows that differ"),
    Command("generate-logs", "serpeval.cli.cmd_generate_logs",
            "write a realistic simulated search log (Parquet) for trying ab / interleaving-report"),
    Command("report", "serpeval.cli.cmd_report",
            "write a self-contained HTML report (tables, plots, significance)"),
    Command("counterfactual", "serpeval.cli.cmd_counterfactual",
            "estimate rankers never shown from a randomised (interleaving or A/B) log, with support checks"),
    Command("simulate", "serpeval.cli.cmd_simulate",
            "how many impressions interleaving and A/B tests need to tell two rankers apart"),
    Command("agreement", "serpeval.cli.cmd_agreement",
            "assessor agreement between label sets (kappa, alpha) and system-ranking stability"),
    Command("clicks-to-qrels", "serpeval.cli.cmd_clicks_to_qrels",
            "infer graded qrels from a click log by fitting a click model"),
    Command("pool", "serpeval.cli.cmd_pool",
            "the documents to judge next (depth-k, RRF, RBP or move-to-front pooling)"),
    Command("judged", "serpeval.cli.cmd_judged",
            "Graded@k and Unjudged@k: the share of each run's top k that is judged, and not"),
    Command("ties", "serpeval.cli.cmd_ties",
            "score ties of a run: queries tied in the top k, group sizes, how far each measure can move"),
    Command("diff", "serpeval.cli.cmd_diff",
            "compare two runs without judgments: overlap, RBO, Kendall's tau"),
    Command("retrieve", "serpeval.cli.cmd_retrieve",
            "run topics through a search engine (embedded BM25 or HTTP) and write a TREC run"),
    Command("sweep", "serpeval.cli.cmd_sweep",
            "tune engine parameters (k1 x b...): a cross-validated winner, corrected tests, a heat map"),
    Command("import-judgments", "serpeval.cli.cmd_import_judgments",
            "qrels + topics from Elasticsearch _rank_eval, OpenSearch SRW, Quepid or RRE files"),
)

_BY_NAME = {row.name: row for row in COMMANDS}


def names() -> tuple[str, ...]:
    """The command names, in the table's order."""
    return tuple(_BY_NAME)


def command(name: str) -> Command | None:
    """The table's row for ``name``, or None when no command has that name."""
    return _BY_NAME.get(name)


def summary(name: str) -> str:
    """The one-line help of command ``name`` (what ``serpeval --help`` shows)."""
    return _BY_NAME[name].help
