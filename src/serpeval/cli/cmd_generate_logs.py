"""``serpeval generate-logs DIR --users N [--effect 0.05] [--interleaving [team_draft|probabilistic]]``:
a simulated log."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from serpeval.cli._args import FINITE, NON_NEGATIVE_INT, POSITIVE_INT, output_folder, real
from serpeval.cli.commands import summary
from serpeval.cli.progress import bar
from serpeval.core.errors import OptionError, OutputError


def register(sub: Any) -> None:
    p = sub.add_parser(
        "generate-logs",
        help=summary("generate-logs"),
        description="Simulate users searching and clicking (click models of serpeval.online) and "
        "write DIR/impressions.parquet (and DIR/pre.parquet with --pre-days): an A/B "
        "experiment with a known injected effect, or an interleaving experiment.",
    )
    p.add_argument("folder", type=output_folder, help="output folder (created if missing)")
    p.add_argument("--users", type=POSITIVE_INT, default=100_000, help="users (default 100000)")
    p.add_argument(
        "--effect",
        type=FINITE,
        default=0.0,
        help="A/B: attractiveness shift of the treatment on the logit scale (default 0)",
    )
    p.add_argument(
        "--experiments", type=POSITIVE_INT, default=1, help="experiments, users split among them (default 1)"
    )
    p.add_argument("--variants", default="control,treatment",
                   help="arm names, first = control (default control,treatment)")
    p.add_argument("--click-model", default="dbn", help="click model preset (default dbn)")
    p.add_argument("--impressions-per-user", type=real(minimum=1.0), default=4.0,
                   help="mean searches per user, >= 1 (default 4)")
    p.add_argument("--days", type=POSITIVE_INT, default=14,
                   help="experiment length in days (default 14)")
    p.add_argument("--pre-days", type=NON_NEGATIVE_INT, default=0,
                   help="also write a pre-period of this many days (default 0: none)")
    p.add_argument(
        "--interleaving",
        nargs="?",
        const="team_draft",
        default=None,
        choices=("team_draft", "probabilistic"),
        metavar="{team_draft,probabilistic}",
        help="an interleaving log of ranker A and a better ranker B: team draft (the default when "
        "the flag has no value), or probabilistic interleaving, whose log records the logging "
        "rankings, tau and each list's exact propensity (what serpeval counterfactual reads)",
    )
    p.add_argument("--tau", type=real(above=0.0), default=None,
                   help="--interleaving probabilistic: the softmax steepness (default 3)")
    p.add_argument(
        "--changed-queries",
        type=real(above=0.0),
        default=1.0,
        metavar="SHARE",
        help="ranker B differs from A on this share of the queries only (the injected --effect "
        "too); the 'triggered' column marks the impressions whose arms' pages differ "
        "(default 1: every query)",
    )
    p.add_argument("--ignore-shared", action="store_true",
                   help="--interleaving team_draft: draft with team draft's ignore_shared (shared picks on no team)")
    p.add_argument("--seed", type=NON_NEGATIVE_INT, default=0, help="random seed (default 0)")
    p.add_argument("--force", action="store_true",
                   help="replace a log already in the folder (refused by default)")
    p.set_defaults(func=run)


LOG_FILES = ("impressions.parquet", "pre.parquet")


def refuse_existing(folder: str, force: bool) -> None:
    """Refuse, before generating, a folder that is a file, or that holds a log (unless --force)."""

    target = Path(folder)
    if target.exists() and not target.is_dir():
        raise OutputError(f"{folder}: cannot write a log folder: a file of that name exists.")
    found = [name for name in LOG_FILES if (target / name).exists()]
    if found and not force:
        raise OutputError(f"{folder}: already holds a log ({', '.join(found)}); pass --force to "
                          "replace it, or choose another folder.")


def run(args: argparse.Namespace) -> int:
    from serpeval.online.simulation.generate import LogGenerator

    if args.tau is not None and args.interleaving != "probabilistic":
        raise OptionError(f"--tau {args.tau:g} applies to probabilistic interleaving only; add "
                          "--interleaving probabilistic, or leave --tau out.")
    if args.interleaving and args.effect:
        raise OptionError(f"--effect {args.effect:g} applies to A/B logs; in an --interleaving log ranker B is "
                          "already the better ranker (it orders the results with less noise than A). Leave "
                          "--effect out, or drop --interleaving for an A/B log.")
    if args.ignore_shared and args.interleaving != "team_draft":
        raise OptionError("--ignore-shared is a team-draft option; use it with --interleaving (team_draft), "
                          "or leave it out.")
    refuse_existing(args.folder, args.force)
    experiments: int | tuple[str, ...] = (
        args.experiments if args.experiments != 1 else ("ranker-v2",)
    )
    generator = LogGenerator(
        args.users,
        experiments=experiments,
        variants=tuple(v.strip() for v in args.variants.split(",")),
        effect=args.effect,
        click_model=args.click_model,
        impressions_per_user=args.impressions_per_user,
        days=args.days,
        pre_days=args.pre_days,
        interleaving=args.interleaving or False,
        tau=3.0 if args.tau is None else args.tau,
        noise_b=1.0 if args.interleaving or args.changed_queries < 1 else None,
        changed_queries=args.changed_queries,
        ignore_shared=args.ignore_shared,
    )
    with bar("generating users") as progress:
        folder = generator.write(args.folder, rng=args.seed, progress=progress)
    pre = " and pre.parquet" if generator.pre_days > 0 else ""  # what write() wrote
    print(f"wrote {folder / 'impressions.parquet'}{pre} ({args.users:,} users)")
    return 0
