"""One bad string never loses a run, and the counts are those of the rows written (issue 57, items 5 and 6).

The families: every kind of text Arrow cannot write or a reader cannot use (a lone surrogate of either half, at the
start, middle or end, alone or in a list cell; a NUL), coming from a generator callable, an LLM endpoint's JSON
answer and a method's edit record; and counterfactuals a method reports inconsistently (exact repeats, one event
for two rows, none for one). The map must finish, the bad rows be skipped with their reason, and the statistics
equal what the written rows say.
"""

from __future__ import annotations


import pytest
from datasets import Dataset
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cfaug_hf import AugmentationStats, Augmenter, AugmenterConfig, Counterfactual, RowResult, TaskSchema

BAD = ["\ud800", "\udfff", "ok \ud83d tail", "\udc80start", "end\udbff", "nul\x00here"]


def _reviews(n: int = 4) -> Dataset:
    return Dataset.from_dict({"text": [f"A fine film number {i}." for i in range(n)],
                              "label": [1, 0] * (n // 2)})


class _Planned(Augmenter):
    """Writes what a plan says for each row: a list of (text, kind) counterfactuals and whether to report them."""

    method = ""
    config_class = AugmenterConfig

    def __init__(self, plan):
        super().__init__(TaskSchema.sentiment())
        self.plan = plan

    def augment_examples(self, examples):
        out = []
        for ex in examples:
            cfs, events = self.plan[ex.index]
            out.append(RowResult([Counterfactual({"text": t}, "positive" if ex.label == "negative" else "negative",
                                                 kind, edit) for t, kind, edit in cfs], list(events)))
        return out


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("where", ["text", "edit"])
def test_text_arrow_cannot_write_is_a_skip_reason_not_a_failed_map(bad, where):
    plan = {i: ([("fine text", "x", {}), (bad, "x", {})] if where == "text" else [("t", "x", {"note": bad})],
                ["produced:x"]) for i in range(4)}
    augmenter = _Planned(plan)
    out = augmenter.augment(_reviews(), load_from_cache_file=False)
    written = sum(out["cf_is_counterfactual"])
    assert written == (4 if where == "text" else 0)
    assert augmenter.stats.counterfactuals == written
    assert augmenter.stats.by_prefix("filtered") == {"invalid_text": 4}
    if where == "edit":
        assert augmenter.stats.skipped == {"invalid_text": 4}


@pytest.mark.parametrize("bad", BAD)
def test_an_endpoint_answering_bad_text_loses_only_that_row(bad):
    from llm_server import LLMServer

    from cfaug_hf import LLMCounterfactualAugmenter, OpenAICompatibleLLM

    server = LLMServer()
    try:
        server.responder = lambda prompt, body: f"\"{bad}\"" if "number 1" in prompt else "\"A dull film.\""
        llm = OpenAICompatibleLLM(base_url=server.url, model="m", max_retries=0)
        augmenter = LLMCounterfactualAugmenter(llm, checker=None)
        data = Dataset.from_dict({"text": [f"A fine film number {i}." for i in range(3)],
                                  "label": ["positive"] * 3})
        out = augmenter.augment(data, load_from_cache_file=False)
    finally:
        server.close()
    assert sum(out["cf_is_counterfactual"]) == 2
    # Skipped with its reason: unwritable text, or (a bare surrogate) an answer the parser finds empty.
    assert sum(augmenter.stats.skipped.values()) == 1 and set(augmenter.stats.skipped) <= {"invalid_text",
                                                                                          "llm_unparseable"}


@pytest.mark.parametrize("bad", BAD)
def test_a_generator_callable_returning_bad_text(bad, fever_rows):
    from cfaug_hf import CrossAugAugmenter

    augmenter = CrossAugAugmenter(lambda claims: [bad for _ in claims], TaskSchema.fact_verification(id_column="id"),
                                  checker=None)
    out = augmenter.augment(Dataset.from_dict(fever_rows), load_from_cache_file=False)
    assert all(not cf or (not any("\ud800" <= ch <= "\udfff" for ch in t) and "\x00" not in t)
               for cf, t in zip(out["cf_is_counterfactual"], out["claim"]))


@st.composite
def plans(draw):
    rows = {}
    for i in range(4):
        texts = draw(st.lists(st.sampled_from(["a", "b", "a", "\ud800", "c\x00"]), max_size=4))
        kinds = draw(st.lists(st.sampled_from(["x", "y"]), min_size=len(texts), max_size=len(texts)))
        reported = draw(st.lists(st.sampled_from(["produced:x", "produced:y", "skipped:other"]), max_size=3))
        rows[i] = ([(t, k, {}) for t, k in zip(texts, kinds)], reported)
    return rows


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(plan=plans(), keep=st.booleans())
def test_the_statistics_are_those_of_the_rows_written(plan, keep):
    augmenter = _Planned(plan)
    augmenter.config.keep_original = keep
    out = augmenter.augment(_reviews(), load_from_cache_file=False)
    cfs = [k for k, c in zip(out["cf_kind"], out["cf_is_counterfactual"]) if c]
    assert augmenter.stats.counterfactuals == len(cfs)
    assert augmenter.stats.produced == {k: cfs.count(k) for k in sorted(set(cfs))}
    assert augmenter.stats.rows_out == len(out)
    pairs = [(s, t, k) for s, t, k, c in zip(out["cf_source_id"], out["text"], out["cf_kind"],
                                              out["cf_is_counterfactual"]) if c]
    assert len(pairs) == len(set(pairs))  # no exact repeat of a row's counterfactual
    if keep:
        recovered = AugmentationStats.from_dataset(out)
        assert recovered.counterfactuals == len(cfs) and recovered.rows_out == len(out)
