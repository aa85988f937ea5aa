"""trec_eval's names live in one table: the measure specs; the catalog only orders them."""

from __future__ import annotations

from serpeval.measures import REGISTRY
from serpeval.trec_eval.catalog import MEASURES, TREC_TO_SPEC

# trec_eval output lines that no serpeval measure computes (they are not per-query numbers
# of a ranking: the run's tag, the query count, the relevance string).
NOT_MEASURES = {"runid", "num_q", "relstring"}


def test_every_catalog_name_is_computed_by_the_spec_that_names_it() -> None:
    for name, _, _ in MEASURES:
        spec = REGISTRY.for_trec_name(name)
        if name in NOT_MEASURES:
            assert spec is None
            assert TREC_TO_SPEC[name] is None
        else:
            assert spec is not None, f"no measure spec lists the trec_eval name {name!r}"
            assert TREC_TO_SPEC[name] == spec.name
            assert name in spec.trec or name in spec.trec_cut


def test_every_trec_name_of_a_spec_is_printed_by_trec_eval() -> None:
    printed = {name for name, _, _ in MEASURES}
    named = {(name, spec.name) for spec in REGISTRY for name in (*spec.trec, *spec.trec_cut)}
    # dcg_cut is serpeval's (DCG@k under a trec_eval-style name); trec_eval 10.0 has no such line.
    assert {name for name, _ in named} - printed == {"dcg_cut"}
    assert dict(named)["map"] == "AP"
    assert dict(named)["ndcg_cut"] == "nDCG"
