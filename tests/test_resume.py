"""A long augmentation resumes after a kill: ``augment(checkpoint_dir=...)`` writes each part as it finishes, and a
rerun maps only the parts not yet written, with the same output as an uninterrupted run."""

from __future__ import annotations

import pytest
from datasets import Dataset
from hypothesis import given, settings
from hypothesis import strategies as st

from cfaug_hf import CrossAugAugmenter
from cfaug_hf.augmenter import AugmentationError


class Negator:
    """A claim generator whose counts and planned crash live outside it (a kill comes from outside the augmenter,
    and the augmenter's fingerprint, which names the parts, must not change with them)."""

    log = {"calls": 0, "claims": 0, "fail_at_call": None}

    def __init__(self, fail_at_call: int | None = None) -> None:
        Negator.log.update(calls=0, claims=0, fail_at_call=fail_at_call)

    @property
    def claims(self) -> int:
        return Negator.log["claims"]

    def __call__(self, claims: list[str]) -> list[str]:
        log = Negator.log
        log["calls"] += 1
        if log["fail_at_call"] is not None and log["calls"] == log["fail_at_call"]:
            raise RuntimeError("killed")
        log["claims"] += len(claims)
        return [c.replace(" is ", " is not ") for c in claims]


def rows(n: int) -> Dataset:
    from datasets import Features, Value

    return Dataset.from_dict({"claim": [f"Town {i} is in Spain." for i in range(n)],
                              "evidence": [f"Town {i} is a town in Spain." for i in range(n)],
                              "label": ["SUPPORTS"] * n},
                             features=Features({c: Value("string") for c in ("claim", "evidence", "label")}))


def augmenter(generator: Negator) -> CrossAugAugmenter:
    return CrossAugAugmenter(generator=generator, checker=None)


def test_a_run_killed_mid_way_resumes_at_its_first_unfinished_part_with_identical_output(tmp_path):
    data = rows(50)
    whole = augmenter(Negator())
    expected = whole.augment(data, batch_size=5)
    crashing = Negator(fail_at_call=4)  # parts of 10 rows in batches of 5: dies in the second part
    with pytest.raises(AugmentationError):
        augmenter(crashing).augment(data, batch_size=5, checkpoint_dir=tmp_path, checkpoint_rows=10)
    assert crashing.claims == 15 and len(list(tmp_path.glob("part-*.arrow"))) == 1
    rerun = Negator()
    aug = augmenter(rerun)
    out = aug.augment(data, batch_size=5, checkpoint_dir=tmp_path, checkpoint_rows=10)
    assert rerun.claims == 40  # the finished part is read back, not generated again
    assert out.to_list() == expected.to_list()
    assert aug.stats.to_dict() == whole.stats.to_dict()
    again = Negator()
    augmenter(again).augment(data, batch_size=5, checkpoint_dir=tmp_path, checkpoint_rows=10)
    assert again.claims == 0  # a finished run is read back whole


def test_each_parts_bar_says_the_time_left_for_the_whole_run_from_the_rows_computed(tmp_path, monkeypatch):
    import datasets

    descs = []
    real_map = datasets.Dataset.map

    def map_(self, *args, **kwargs):
        descs.append(kwargs.get("desc"))
        return real_map(self, *args, **kwargs)

    monkeypatch.setattr(datasets.Dataset, "map", map_)
    data = rows(30)
    augmenter(Negator()).augment(data, batch_size=5, checkpoint_dir=tmp_path, checkpoint_rows=10)
    assert descs[0] == "crossaug augmentation (part 1/3)"  # nothing measured yet
    assert all(" s/row, about " in d and d.endswith(" left for all)") for d in descs[1:3])
    descs.clear()  # read back whole: no part computed, so no rate to quote
    augmenter(Negator()).augment(data, batch_size=5, checkpoint_dir=tmp_path, checkpoint_rows=10)
    assert [d for d in descs if d and "part" in d] == [f"crossaug augmentation (part {i}/3)" for i in (1, 2, 3)]


def test_an_automatic_batch_size_is_paced_so_the_bar_keeps_moving_and_the_rows_stay_the_same(tmp_path, monkeypatch):
    import datasets

    sizes = []
    real_map = datasets.Dataset.map

    def map_(self, *args, **kwargs):
        if "part" in (kwargs.get("desc") or ""):
            sizes.append(kwargs["batch_size"])
        return real_map(self, *args, **kwargs)

    data = rows(60)
    expected = augmenter(Negator()).augment(data)
    monkeypatch.setattr(datasets.Dataset, "map", map_)
    out = augmenter(Negator()).augment(data, checkpoint_dir=tmp_path, checkpoint_rows=20)
    assert out.to_list() == expected.to_list()
    assert sizes[0] == 8 and all(1 <= s <= 8 for s in sizes)  # auto_batch_size(60) is 8: never more
    sizes.clear()
    augmenter(Negator()).augment(data, batch_size=5, checkpoint_dir=tmp_path / "given", checkpoint_rows=20)
    assert sizes == [5, 5, 5]  # a batch size the user gives is kept


def test_the_pace_is_the_rate_measured_so_far():
    from cfaug_hf.augmenter import _RunClock

    clock = _RunClock(100)
    assert clock.batch_for(5.0, 1000) == 8 and clock.batch_for(5.0, 4) == 4  # no rate yet
    clock.computed, clock.seconds = 20, 40.0  # 2 s a row
    assert clock.batch_for(5.0, 1000) == 2 and clock.batch_for(5.0, 1) == 1
    clock.computed, clock.seconds = 20, 1.0  # 0.05 s a row
    assert clock.batch_for(5.0, 1000) == 100 and clock.batch_for(5.0, 30) == 30
    clock.seconds = 1000.0
    assert clock.batch_for(5.0, 30) == 1  # slower than the pace: one row a batch


def test_time_left_reads_as_a_person_says_it():
    from cfaug_hf.augmenter import _duration

    assert [_duration(s) for s in (4, 89, 600, 5399, 5400, 36000)] == ["4 s", "89 s", "10 min", "90 min", "1.5 h",
                                                                         "10.0 h"]


def test_parts_of_other_settings_are_not_reused(tmp_path):
    data = rows(12)
    augmenter(Negator()).augment(data, checkpoint_dir=tmp_path, checkpoint_rows=4)
    other = Negator()
    CrossAugAugmenter(generator=other, checker=None, seed=7).augment(data, checkpoint_dir=tmp_path,
                                                                     checkpoint_rows=4)
    assert other.claims == 12
    changed = Negator()
    augmenter(changed).augment(rows(13), checkpoint_dir=tmp_path, checkpoint_rows=4)
    assert changed.claims == 13


@settings(max_examples=15, deadline=None)
@given(n=st.integers(0, 23), part_rows=st.integers(1, 30), batch_size=st.integers(1, 8))
def test_checkpointed_output_equals_one_map_for_any_part_size(tmp_path_factory, n, part_rows, batch_size):
    data = rows(n)
    plain = augmenter(Negator()).augment(data, batch_size=batch_size)
    aug = augmenter(Negator())
    parts = aug.augment(data, batch_size=batch_size, checkpoint_dir=tmp_path_factory.mktemp("parts"),
                        checkpoint_rows=part_rows)
    assert parts.to_list() == plain.to_list() and aug.stats.rows_in == n


def test_checkpoint_options_are_checked(tmp_path):
    data = rows(3)
    with pytest.raises(ValueError, match="checkpoint_rows must be a positive integer, got 0"):
        augmenter(Negator()).augment(data, checkpoint_dir=tmp_path, checkpoint_rows=0)
    with pytest.raises(ValueError, match="checkpoint_dir needs a Dataset"):
        augmenter(Negator()).augment(data.to_iterable_dataset(), checkpoint_dir=tmp_path)


def test_cfaug_augment_killed_mid_way_resumes_with_the_same_command(tmp_path, capsys, monkeypatch):
    import json

    from datasets import load_from_disk

    from cfaug_hf import Generator, cli
    from cfaug_hf.testing import tiny_seq2seq

    data = tmp_path / "claims.jsonl"
    data.write_text("\n".join(json.dumps({"claim": f"Town {i} is in Spain.", "evidence": [f"Town {i} is old."],
                                          "label": "SUPPORTS"}) for i in range(6)))
    gen = Generator(*tiny_seq2seq(), num_beams=1, max_new_tokens=3).save_pretrained(tmp_path / "gen")
    options = ["--method", "crossaug", "--generator", str(gen), "--checker", "none", "--batch-size", "1",
               "--checkpoint-rows", "2", "--out"]
    command = ["augment", str(data), *options]
    copy = tmp_path / "copy.jsonl"  # the same rows in another file: a reference run with no parts to share
    copy.write_text(data.read_text())
    assert cli.main(["augment", str(copy), *options, str(tmp_path / "whole")]) == 0
    real, calls = Generator.generate_with_info, {"n": 0}

    def dies_at_the_fourth_call(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt  # Ctrl-C in the second part
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Generator, "generate_with_info", dies_at_the_fourth_call)
    capsys.readouterr()
    assert cli.main(command + [str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err
    assert "run the same command again" in err and not (tmp_path / "out").exists()
    monkeypatch.setattr(Generator, "generate_with_info", real)
    assert cli.main(command + [str(tmp_path / "out")]) == 0
    assert "Resumed: 2 of 6 rows were read back from the finished parts" in capsys.readouterr().out
    assert load_from_disk(str(tmp_path / "out" / "data")).to_list() == \
        load_from_disk(str(tmp_path / "whole" / "data")).to_list()
    assert cli.main(command + [str(tmp_path / "again")]) == 0  # the same command on the same data: read back whole
    assert "came from the datasets cache" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------- one input in
def test_one_text_in_gives_its_counterfactuals_with_provenance():
    from cfaug_hf import TaskSchema
    from cfaug_hf.testing import NegateAugmenter

    aug = NegateAugmenter(TaskSchema.sentiment(id_column="id"))
    rows = aug.counterfactuals("the film was good", "positive")
    assert [(r["text"], r["label"], r["cf_kind"]) for r in rows] == [("the film was not good", "negative", "negated")]
    assert aug.counterfactuals("a good film", "positive") == [] and aug.stats.skipped == {"no_verb": 1}
    nli = NegateAugmenter(TaskSchema.nli())
    out = nli.counterfactuals({"premise": "the man was asleep", "hypothesis": "A man sleeps."}, "entailment")
    assert out[0]["premise"] == "the man was not asleep" and out[0]["hypothesis"] == "A man sleeps."


@pytest.mark.parametrize("text,label,error,match", [
    ("a premise alone", "entailment", TypeError, r"text columns \['premise', 'hypothesis'\]; pass text as a dict"),
    (["the film was good"], "entailment", TypeError, "text must be a string or a dict"),
    ({"premise": "A man sleeps."}, "entailment", Exception, "hypothesis"),
    ({"premise": "A man sleeps.", "hypothesis": "he was up"}, "maybe", Exception, "maybe"),
])
def test_one_input_in_refuses_what_the_task_cannot_read(text, label, error, match):
    from cfaug_hf import TaskSchema
    from cfaug_hf.testing import NegateAugmenter

    with pytest.raises(error, match=match):
        NegateAugmenter(TaskSchema.nli()).counterfactuals(text, label)


@pytest.mark.parametrize("damage", ["same-size byte change", "truncated", "record removed", "record garbled",
                                    "emptied"])
def test_a_damaged_part_is_computed_again_never_merged(damage, tmp_path, caplog):
    """Issue 80, item 3: a same-size byte change in a finished part was resumed silently into the output, and a
    truncated part stopped every rerun with pyarrow's message. Each part now carries the digest of its files, checked
    before it is read back; a part that does not match is redone, and said so."""
    data = rows(30)
    expected = augmenter(Negator()).augment(data, batch_size=5)
    augmenter(Negator()).augment(data, batch_size=5, checkpoint_dir=tmp_path, checkpoint_rows=10)
    part = sorted(tmp_path.glob("part-*-00002-of-00003.arrow"))[0]
    record = part.with_suffix(".digest.json")
    assert record.is_file()
    raw = part.read_bytes()
    if damage == "same-size byte change":
        at = raw.index(b"Town 13 is not in Spain.") + len(b"Town ")
        part.write_bytes(raw[:at] + b"9" + raw[at + 1:])
    elif damage == "truncated":
        part.write_bytes(raw[: len(raw) // 2])
    elif damage == "record removed":
        record.unlink()
    elif damage == "record garbled":
        record.write_text("{")
    else:
        part.write_bytes(b"")
    rerun = Negator()
    with caplog.at_level("WARNING"):
        out = augmenter(rerun).augment(data, batch_size=5, checkpoint_dir=tmp_path, checkpoint_rows=10)
    assert out.to_list() == expected.to_list()
    assert rerun.claims == 10, "only the damaged part is computed again"
    assert "part 2 of 3" in caplog.text and "computed again" in caplog.text
    assert record.is_file()  # and it is trusted from now on
    again = Negator()
    augmenter(again).augment(data, batch_size=5, checkpoint_dir=tmp_path, checkpoint_rows=10)
    assert again.claims == 0
