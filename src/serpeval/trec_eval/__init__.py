"""``serpeval trec_eval``: a drop-in replacement for NIST's trec_eval 10.0 and 9.0.8.

Same options (:mod:`.options`), same measures in the same order (:mod:`.catalog`), same
numbers (:mod:`.compute`, on serpeval's ranking and measure kernels), same bytes
(:mod:`.output`), same exit codes. Where trec_eval 10.0 has a bug the behaviour is the
documented, intended one, and ``trec_eval -h`` lists each such choice (:mod:`.help`).

The command line itself (reading argv, printing, the progress spinner, exit statuses) is
:mod:`serpeval.cli.cmd_trec_eval`; this package computes and formats. It may import
evaluation, measures, ranking, io and core.

Examples:
    >>> import io
    >>> from serpeval.cli.cmd_trec_eval import run
    >>> out, err = io.BytesIO(), io.StringIO()
    >>> run(["-m", "map", "qrels.txt", "run.txt"], stdout=out, stderr=err)  # doctest: +SKIP
    0
"""

from __future__ import annotations

from serpeval.trec_eval.options import Options, TrecEvalError, parse_options
from serpeval.trec_eval.output import format_evaluation

__all__ = ["Options", "TrecEvalError", "format_evaluation", "parse_options"]
