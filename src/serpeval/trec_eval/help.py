"""The text of ``trec_eval -h``: options, compat modes, documented deviations, measures."""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from serpeval.measures import REGISTRY

__all__ = ["help_text"]

HELP = """\
trec_eval [-h] [-q] [-m measure[.params]] [-c] [-n] [-l <num>] [-N <num>] [-M <num>] [-J]
   [--compat 10.0|9.0.8] rel_info_file results_file

serpeval's drop-in replacement for NIST trec_eval: the same options, the same output
(byte for byte) and exit codes, computed by serpeval. If results_file is '-', the run is
read from standard input.

 -h, --help: this help, plus the description of every measure given with -m.
 -v, --version: print the version (on stderr) and exit.
 -q, --query_eval_wanted: also print the values of each topic.
 -m, --measure measure[.params]: add a measure, or a nickname for a set of measures:
     'official' (the default), 'all_trec' (every measure of the standard formats), 'set'
     (measures of the unranked retrieved set). Repeatable. Parameters follow a '.':
     -m P.5,10   -m ndcg_cut.3,7   -m iprec_at_recall.0.25,0.5   -m set_F.0.5 (beta^2)
     -m utility.2,-1,0,0   -m ndcg.1=3,2=9 (gain of each grade)   -m rbp.p=0.5
     -m relstring.20. Measures print in trec_eval's fixed order, not command-line order;
     a measure's parameters come from its first -m.
 -c, --complete_rel_info_wanted: average over every topic in the qrels; topics missing
     from the run count as 0 (10.0 also prints their -q rows).
 -l, --level_for_rel <num>: the lowest grade that is relevant (default 1).
 -n, --nosummary: no summary ('all') rows.
 -M, --Max_retrieved_per_topic <num>: keep the top <num> docs of each topic, after sorting.
 -J, --Judged_docs_only: drop every unjudged doc from the rankings first. Easy to forget
     that a number was computed this way: use with care.
 -N, --Number_docs_in_coll <num>: documents in the collection (for utility only).
 -D, --Debug_level <num>[.qid]: with .qid, evaluate only that topic (no debug traces).
 -R qrels, -T trec_results: the only formats supported. -o: accepted, ignored.
 --compat 10.0 (default) | 9.0.8: the trec_eval version whose numbers to give. 9.0.8 is
     what pytrec_eval wraps: scores compared as 32-bit floats, iprec_at_recall/11pt_avg
     cutoffs rounded as (long)(x*R + 0.9) instead of lround(x*R), '#' lines refused in
     runs, no rbp/rbp_resid/unj/dcg/ideal_dcg, -c prints no rows for missing topics.

Rules (as trec_eval): ranks come from the scores (descending, ties broken by docno
descending in byte order), not from the rank column or the line order; only topics in
the qrels are evaluated; a docno not in the qrels is unjudged ('-' in relstring), a
negative grade means "in the pool but unjudged" ('.'); a duplicate docno in a topic's
top -M docs is an error (exit 4).

Where serpeval deliberately differs from trec_eval 10.0:
 * A qrels topic missing from the run is skipped, as in 9.0.8 and as 10.0's own help says,
   with one warning line on stderr giving the count. (10.0 exits 4 with a reversed
   message, "result qid ... not found in qrels".) -c still counts such topics as 0.
 * rbp uses its clean definition: gains rescaled to [0, 1] by (gain - min)/(max - min)
   with min and max starting at 0. (10.0 reads two uninitialised variables there, so
   -m rbp alone can print different numbers than inside -m all_trec.)
 * Where trec_eval divides 0/0 and prints -nan (iprec_at_recall/11pt_avg under -J with no
   judged doc retrieved, Rndcg with relevant docs but no positive gain), serpeval prints 0.
 * Gains less than 1 apart (-m ndcg.1=0.5,2=0.7) are ordered correctly in the ideal
   ranking; trec_eval's comparator truncates their difference to an integer.
 * Each measure keeps its own parameters (10.0's dcg, ideal_dcg and ndcg share one block).
 * With -c, a missing topic's utility, relstring and rbp_resid are cleared also when they
   carry parameters (10.0 clears them only under their bare names), and its other measures
   are those of a ranking that retrieved nothing: 10.0 scores a one-document placeholder
   ranking (an unjudged doc), which is above 0 where unjudged docs get a gain
   (-m ndcg.-1=2, dcg.-1=2, rbp.-1=2).
 * A topic whose judgments are all negative is evaluated (no relevant doc); trec_eval
   exits 4 or reads stale counts there.
 * 11pt_avg levels are sorted; trec_eval skips levels given out of order.
 * Inputs are read strictly: a non-numeric score or grade (also 0x10 or 1_0), a NaN score,
   ids that are not UTF-8, a duplicate judgment (in any topic) are errors naming the file
   and line (exit 2 or 4), where trec_eval's atof/atol read garbage as 0. Blank lines in
   qrels are skipped.
 * A UTF-8 byte order mark starting a line (Windows editors write one; files joined with
   cat carry more) is removed; trec_eval keeps it in the topic id, which then matches no
   topic of the other file.
 * -l below 0 and -M below 1 are refused (exit 1); -Z, -R prefs/qrels_jg and the
   preference measures are not supported.
 * Errors print serpeval's messages (file:line, what was expected); the exit codes are
   trec_eval's: 1 usage or unknown measure, 2 bad input or measure parameters, 4 duplicate
   docs or a measure that cannot be computed, 7 no topic with both qrels and results.
 * With -c, num_rel's 'all' row counts the qrels lines with grade > 0 in all topics,
   ignoring -l: that is trec_eval's documented output (m_num_rel.c), so serpeval prints it
   too, though the -q rows (grade >= -l) do not add up to it.
"""


def help_text(measures: Sequence[str], compat: str) -> str:
    """The help, followed by a description of each measure named with -m (in trec_eval's
    order; nicknames expand)."""
    from serpeval.trec_eval.catalog import NICKNAMES, TREC_TO_SPEC, measure_names

    known = measure_names(compat)
    wanted: set[str] = set()
    for argument in measures:
        name = argument.partition(".")[0]
        wanted.update(NICKNAMES.get(name, (name,)))
    parts = [HELP, "-----------------------",
             "Individual measure documentation for requested measures"]
    shown = False
    for name in known:
        if name not in wanted:
            continue
        shown = True
        spec_name = TREC_TO_SPEC.get(name)
        if spec_name is None:
            parts.append(f"{name}\n    {_SPECIAL[name]}")
            continue
        spec = REGISTRY[spec_name]
        doc = inspect.cleandoc(spec.kernel.__doc__ or spec.summary)
        body = "\n".join("    " + line if line else "" for line in doc.splitlines())
        parts.append(f"{name}  (serpeval: {spec.name}; {spec.reference})\n{body}")
    if not shown:
        parts.append("-- No measures indicated.\n   Request measure documentation using "
                     "<-m measure> on command line")
    return "\n".join(parts) + "\n"


_SPECIAL = {
    "runid": "The run tag (6th field) of the last line of the run file. Summary only.",
    "num_q": "Number of topics averaged over (all qrels topics with -c). Summary only.",
    "relstring": "The grades of the first N (default 10, -m relstring.N) retrieved docs as "
                 "characters: 0-9, '>' above 9,\n    '-' not in the qrels, '.' a negative grade "
                 "(pooled but unjudged). Per topic only.",
}
