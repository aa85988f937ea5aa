"""``serpeval simulate QRELS --run-a A --run-b B --click-model navigational``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from serpeval.cli._args import NON_NEGATIVE_INT, POSITIVE_INT, PROBABILITY, new_file, real
from serpeval.cli.commands import summary
from serpeval.cli.common import EXIT_CODES_HELP, check_outputs, table_width, write_output
from serpeval.cli.progress import bar
from serpeval.core.errors import InputError, OptionError
from serpeval.report.table import FORMATS, render


def register(sub: Any) -> None:
    p = sub.add_parser(
        "simulate",
        help=summary("simulate"),
        description="Treat the judgments as the true relevance, let simulated users (a click "
                    "model) use run A (the baseline) and run B (the candidate), and compute for "
                    "team draft interleaving and an A/B test on CTR, abandonment and clicks@1 the "
                    "impressions needed to detect the true difference (exact click-model "
                    "expectations), the ratio A/B / interleaving with a bootstrap CI over "
                    "queries, and whether each agrees with the offline nDCG@k sign; then "
                    "simulate whole experiments to check the power. One sentence per click "
                    "model gives the bottom line. Effects are B - A (positive: B higher). "
                    "--generate GAP replaces QRELS and the runs with a generated pair whose "
                    "nDCG@k differs by GAP (relative to the baseline A, e.g. 0.01): A is the "
                    "generated baseline, B the candidate.",
        epilog=EXIT_CODES_HELP,
    )
    p.add_argument("qrels", nargs="?", help="judgments (TREC qrels, JSONL, Parquet ...)")
    p.add_argument("--run-a", metavar="RUN", help="ranker A's run (the baseline)")
    p.add_argument("--run-b", metavar="RUN", help="ranker B's run (the candidate)")
    p.add_argument("--generate", type=real(above=-1.0), metavar="GAP",
                   help="simulate a generated pair: B (the candidate) above A (the baseline) by GAP "
                        "in nDCG@k, relative to A (> -1; negative: B worse)")
    p.add_argument("--queries", type=POSITIVE_INT, default=200, help="queries of a generated pair (default 200)")
    p.add_argument("-c", "--click-model", action="append", metavar="NAME",
                   help="click model preset (repeat or comma-separate for several; default "
                        "navigational): perfect, navigational, informational, almost_random, "
                        "random, cascade, pbm, dcm, dbn, sdbn")
    p.add_argument("-k", type=POSITIVE_INT, default=10, help="results per impression (default 10)")
    p.add_argument("--impressions-per-user", type=POSITIVE_INT, default=4,
                   help="queries each simulated user issues (default 4)")
    p.add_argument("--user-sd", type=real(minimum=0.0), default=1.0,
                   help="spread of users' click propensity, sd of a logit shift (default 1.0)")
    p.add_argument("--stop-at-every-result", action="store_true",
                   help="grade-table users flip the stop coin at every result, not only after "
                        "a click")
    p.add_argument("--ignore-shared", action="store_true",
                   help="team draft: show documents both rankers pick at once on no team")
    p.add_argument("--alpha", type=PROBABILITY, default=0.05, help="test level (default 0.05)")
    p.add_argument("--power", type=PROBABILITY, default=0.8, help="power to plan for (default 0.8)")
    p.add_argument("--bootstrap", type=POSITIVE_INT, default=2000,
                   help="bootstrap resamples over queries for the CIs (default 2000)")
    p.add_argument("--mc-impressions", type=NON_NEGATIVE_INT, default=10_000_000,
                   help="impressions the Monte Carlo power check may simulate (default 10M; 0: off)")
    p.add_argument("--replicates", type=POSITIVE_INT, default=200,
                   help="at most this many simulated experiments per method (default 200)")
    p.add_argument("--seed", type=NON_NEGATIVE_INT, default=0, help="random seed (default 0)")
    p.add_argument("--plot", metavar="PNG", type=new_file,
                   help="write power vs impressions to this image file, .png added when it has "
                        "no image suffix (needs matplotlib)")
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from serpeval.online.simulation.simulator import SimulationOptions, make_world, simulate, synthetic_pair
    from serpeval.report.simulation import display_rows

    check_outputs({"-o": args.output, "--plot": args.plot}, [args.qrels, args.run_a, args.run_b])
    # The options, checked before the world is built; each click model replaces click_model.
    options = SimulationOptions(
        k=args.k, impressions_per_user=args.impressions_per_user, user_sd=args.user_sd,
        stop_requires_click=False if args.stop_at_every_result else None, ignore_shared=args.ignore_shared,
        alpha=args.alpha, power=args.power, bootstrap=args.bootstrap, mc_impressions=args.mc_impressions,
        replicates=args.replicates, rng=args.seed)
    if args.generate is not None:
        if args.qrels or args.run_a or args.run_b:
            raise InputError("--generate replaces QRELS, --run-a and --run-b; give one or the other.")
        qrels, baseline, candidate = synthetic_pair(args.generate, n_queries=args.queries,
                                                    k=args.k, rng=args.seed)
        world = make_world(qrels, baseline, candidate, k=args.k)  # A: the baseline, B: the candidate
    else:
        if not (args.qrels and args.run_a and args.run_b):
            raise InputError("simulate needs QRELS, --run-a and --run-b (or --generate GAP).")
        world = make_world(args.qrels, args.run_a, args.run_b, k=args.k)
    models = [m.strip() for value in args.click_model or [] for m in value.split(",") if m.strip()]
    models = models or ["navigational"]
    _check_models(models, world.levels, args.stop_at_every_result)
    rows: list[dict[str, Any]] = []
    bottom: list[str] = []
    notes: list[str] = []
    for i, name in enumerate(models):
        with bar(f"simulating experiments ({name})") as progress:
            result = simulate(world=world, options=replace(options, click_model=name), progress=progress)
        for row in result.to_dicts():
            rows.append({"click model": result.click_model, **row} if len(models) > 1 else row)
        bottom.append(result.bottom_line())
        notes.extend(result.notes() if i == 0 else result.notes()[:1])
        if args.plot:
            written = result.plot(args.plot if len(models) == 1 else _suffixed(args.plot, name))
            notes.append(f"power plot: {written}")
    title = f"interleaving vs A/B tests: A = {world.names[0]} vs B = {world.names[1]}"
    if args.format in ("table", "markdown", "latex"):
        rows = display_rows(rows, confidence=result.settings["confidence"])
    write_output(render(rows, args.format, title=title, notes=[*bottom, *notes],
                        width=table_width(args.output)), args.output)
    return 0


def _check_models(models: list[str], levels: int, stop_at_every_result: bool) -> None:
    """Every click model named, checked before the first one is simulated (a typo in the last
    name must not cost the simulations of the others, then their output)."""
    from serpeval.online.clicks import MODELS, TABLES, click_model
    from serpeval.online.common import normalize_name

    for name in models:
        if stop_at_every_result and normalize_name(name) in MODELS and normalize_name(name) not in TABLES:
            raise OptionError(f"--stop-at-every-result applies to the grade-table users ({', '.join(TABLES)}); "
                              f"the {name!r} model defines its own stopping rule. Simulate it without the flag.")
        click_model(name, levels)  # an unknown name: "did you mean"


def _suffixed(path: str, model: str) -> str:
    p = Path(path)
    return str(p.with_name(f"{p.stem}-{model}{p.suffix}"))
