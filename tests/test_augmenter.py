"""The map contract every augmenter shares: provenance, statistics, determinism, caching, errors."""

import json
import subprocess
import sys

import pytest
from datasets import ClassLabel, Dataset, Features, Value, load_from_disk
from datasets.fingerprint import Hasher

from cfaug_hf import (PROVENANCE_COLUMNS, AugmentationStats, Augmenter, Counterfactual, CrossAugAugmenter, Generator,
                      RowResult, SchemaError, TaskSchema)
from cfaug_hf.testing import tiny_seq2seq


class Negate(Augmenter):
    method = "negate-local"  # not "negate": that is cfaug_hf.testing.NegateAugmenter in the registry

    def augment_examples(self, examples):
        out = []
        for ex in examples:
            if ex["text"].startswith("skip"):
                out.append(RowResult(events=["skipped:asked_to"]))
                continue
            flipped = "negative" if ex.label == "positive" else "positive"
            out.append(RowResult([Counterfactual({"text": "not " + ex["text"]}, flipped, "negated",
                                                 {"seed": ex.seed})], ["produced:negated"]))
        return out


def sentiment_ds(n=6, classlabel=False):
    data = {"text": [f"skip {i}" if i % 3 == 2 else f"good film {i}" for i in range(n)],
            "label": [i % 2 for i in range(n)] if classlabel else ["positive", "negative"] * (n // 2),
            "extra": list(range(n))}
    feats = Features({"text": Value("string"),
                      "label": ClassLabel(names=["negative", "positive"]) if classlabel else Value("string"),
                      "extra": Value("int64")})
    return Dataset.from_dict(data, features=feats)


def test_provenance_columns_and_order():
    ds = sentiment_ds()
    out = ds.map(Negate(TaskSchema.sentiment()), batched=True, batch_size=4)
    assert set(PROVENANCE_COLUMNS) <= set(out.column_names)
    assert list(out["cf_kind"])[:3] == ["original", "negated", "original"]
    row = out[1]
    assert row["text"] == "not good film 0" and row["label"] == "negative" and row["extra"] == 0
    assert row["cf_is_counterfactual"] and row["cf_method"] == "negate-local" and row["cf_original_label"] == "positive"
    assert row["cf_source_id"] == out[0]["cf_source_id"] and row["cf_outcome"] == ["produced:negated"]
    assert "seed" in json.loads(row["cf_edit"])
    assert out[0]["cf_edit"] == "" and out[0]["cf_method"] == ""
    # cf_change: the changed words as a plain string, so the Hub's viewer can search it ("not" finds negations)
    assert row["cf_change"] == "text: + not" and out[0]["cf_change"] == ""


def test_classlabel_ids_stay_ids():
    ds = sentiment_ds(classlabel=True)
    out = ds.map(Negate(TaskSchema.sentiment()), batched=True)
    assert isinstance(out.features["label"], ClassLabel)
    assert out[0]["label"] == 0 and out[1]["label"] == 1 and out[1]["cf_original_label"] == "negative"


def test_keep_original_false_and_stats():
    ds = sentiment_ds()
    aug = Negate(TaskSchema.sentiment(), keep_original=False)
    out = ds.map(aug, batched=True)
    assert not any(not x for x in out["cf_is_counterfactual"])
    assert aug.stats.rows_in == 6 and aug.stats.produced == {"negated": 4} and aug.stats.skipped == {"asked_to": 2}
    recovered = AugmentationStats.from_dataset(out, rows_in=6)
    assert recovered.produced == {"negated": 4} and recovered.skipped == {"untraced": 2}


def test_stats_recovered_from_output_match_in_process():
    ds = sentiment_ds(12)
    aug = Negate(TaskSchema.sentiment())
    out = ds.map(aug, batched=True, batch_size=5)
    assert AugmentationStats.from_dataset(out).to_dict() == aug.stats.to_dict()
    d = aug.stats.to_dict()
    assert d["rows_in"] == 12 and d["rows_out"] == 20 and d["counterfactuals"] == 8 and d["skipped"] == {"asked_to": 4}
    assert any("counterfactual negated: 8" in line for line in aug.stats.summary_lines())


def test_errors_before_output_with_row_index(tmp_path):
    ds = Dataset.from_dict({"text": ["fine", "also fine", ""], "label": ["positive", "negative", "positive"]})
    aug = Negate(TaskSchema.sentiment())
    with pytest.raises(SchemaError, match="Column 'text' at row 2"):
        aug.augment(ds)
    with pytest.raises(SchemaError, match="Column 'label' is missing.*Did you mean 'labels'"):
        aug.augment(ds.rename_column("label", "labels"))
    bad_label = Dataset.from_dict({"text": ["fine"], "label": ["meh"]})
    with pytest.raises(SchemaError, match="unknown label 'meh'"):
        bad_label.map(aug, batched=True)


def test_config_overrides_and_type_checks():
    aug = Negate(TaskSchema.sentiment(), seed=3, keep_original=False)
    assert aug.config.seed == 3 and not aug.config.keep_original
    with pytest.raises(TypeError):
        Negate("text")
    with pytest.raises(TypeError):
        Negate(TaskSchema.sentiment(), colour="red")
    assert "seed" in aug.config_class.help()


# ------------------------------------------------------------------------------------ determinism and caching
def fever_dataset(tmp_path, n=16):
    claims = ["the cat sat on the mat", "a dog ran in paris", "the film was good", "he was born in 1990",
              "the king lived in london", "the band won the first song"]
    ds = Dataset.from_dict({
        "claim": [claims[i % len(claims)] + (" ." * (i // len(claims))) for i in range(n)],
        "evidence": [[f"evidence {i}", claims[(i + i % 2) % len(claims)]] for i in range(n)],
        "label": ["SUPPORTS" if i % 4 else "REFUTES" for i in range(n)],
    })
    ds.save_to_disk(str(tmp_path / "src"))
    return load_from_disk(str(tmp_path / "src"))


def sampling_augmenter():
    gen = Generator(*tiny_seq2seq(seed=1), num_beams=1, do_sample=True, max_new_tokens=6, top_k=0)
    return CrossAugAugmenter(gen, seed=7, checker=None)  # also run in a subprocess, outside conftest


def rows(ds):
    return [json.dumps(r, sort_keys=True) for r in ds]


def test_same_output_for_any_batch_size_and_num_proc(tmp_path):
    ds = fever_dataset(tmp_path)
    aug = sampling_augmenter()
    a = ds.map(aug, batched=True, batch_size=2, load_from_cache_file=False)
    b = ds.map(aug, batched=True, batch_size=5, load_from_cache_file=False)
    c = ds.map(aug, batched=True, batch_size=3, num_proc=2, load_from_cache_file=False)
    assert len(a) > len(ds)
    assert rows(a) == rows(b) == rows(c)


def test_row_output_independent_of_position(tmp_path):
    ds = fever_dataset(tmp_path)
    aug = sampling_augmenter()
    full = ds.map(aug, batched=True, batch_size=4, load_from_cache_file=False)
    rev = ds.select(list(range(len(ds)))[::-1]).map(aug, batched=True, batch_size=4, load_from_cache_file=False)
    by_source = lambda d: sorted(rows(d))  # noqa: E731
    assert by_source(full) == by_source(rev)


def test_second_map_hits_cache_without_hash_warning(tmp_path, monkeypatch):
    import datasets.fingerprint as fp

    warnings = []
    monkeypatch.setattr(fp.logger, "warning", lambda msg, *a, **k: warnings.append(msg))
    ds = fever_dataset(tmp_path)
    aug = sampling_augmenter()
    first = ds.map(aug, batched=True)
    aug2 = sampling_augmenter()  # same config and weights, a new object
    start = aug2.stats.rows_in
    second = ds.map(aug2, batched=True)
    assert aug2.stats.rows_in == start  # the function did not run: served from the cache
    assert first.cache_files == second.cache_files
    assert not [w for w in warnings if "hashed properly" in str(w)]
    # a different seed is a different transform
    third = ds.map(CrossAugAugmenter(aug.generator, seed=8), batched=True)
    assert third.cache_files != first.cache_files


def test_fingerprint_is_cheap_and_sensitive_to_weights():
    import torch

    from datasets.utils.py_utils import dumps

    aug = sampling_augmenter()
    weight_bytes = sum(p.numel() * p.element_size() for p in aug.generator.model.parameters())
    # what datasets' hasher pickles is a short token, not the weights (a size, so a slow machine cannot fail it)
    assert len(dumps(aug)) < min(weight_bytes / 10, 20_000)
    h1 = Hasher.hash(aug)
    assert Hasher.hash(sampling_augmenter()) == h1
    with torch.no_grad():
        next(aug.generator.model.parameters()).add_(1e-3)
    assert Hasher.hash(aug) != h1


def test_fingerprint_stable_across_processes():
    code = ("from datasets.fingerprint import Hasher; import tests.test_augmenter as t; "
            "print(Hasher.hash(t.sampling_augmenter()))")
    here = Hasher.hash(sampling_augmenter())
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(__import__("pathlib").Path(__file__).parents[1]))
    assert out.stdout.strip().splitlines()[-1] == here


def test_augment_helper_fills_stats_even_from_cache(tmp_path):
    ds = fever_dataset(tmp_path)
    aug = sampling_augmenter()
    out = aug.augment(ds, batch_size=4)
    again = sampling_augmenter()
    out2 = again.augment(ds, batch_size=4)
    assert rows(out) == rows(out2)
    assert again.stats.to_dict() == aug.stats.to_dict() and aug.stats.rows_in == len(ds)


def test_a_datasets_release_without_the_hashing_hook_warns_once_and_keeps_working(monkeypatch, caplog):
    import types

    from cfaug_hf import fingerprint

    class Held:
        def fingerprint(self):
            return "abc"

    monkeypatch.setitem(sys.modules, "datasets.utils._dill", types.ModuleType("datasets.utils._dill"))
    fingerprint._hashing_pickler_register.cache_clear()
    try:
        with caplog.at_level("WARNING", logger="cfaug_hf.fingerprint"):
            fingerprint.register_cheap_hash([Held])
            fingerprint.register_cheap_hash([Held])
        assert sum("pklregister" in r.getMessage() for r in caplog.records) == 1
        assert "augmenter.augment(dataset) is not affected" in caplog.text
    finally:
        fingerprint._hashing_pickler_register.cache_clear()


def test_a_subclass_of_a_method_survives_the_map_workers_pickling():
    """``Augmenter`` is generic over its config (``NegateAugmenter(Augmenter[NegateConfig])``); a subclass of a
    method inherits ``__orig_bases__``, and dill, which ships a class defined in a notebook to ``num_proc`` workers,
    rebuilt it from those without the method in its MRO (``super().augment_examples`` returned None)."""
    import dill

    from cfaug_hf.testing import NegateAugmenter

    class Slow(NegateAugmenter):
        def augment_examples(self, examples):
            return super().augment_examples(examples)

    rebuilt = dill.loads(dill.dumps(Slow))
    assert rebuilt.__mro__[1].__name__ == "NegateAugmenter"
