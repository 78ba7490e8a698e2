"""Regression tests for results that were once wrong without an error: labels, user files, stale caches, statistics,
interrupted maps."""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from datasets import Dataset, load_from_disk

from cfaug_hf import AugmentationStats, CrossAugAugmenter, Generator, TaskSchema, cli
from cfaug_hf.augmenter import remove_stale_temp_files
from cfaug_hf.sharing.folders import FolderNotEmptyError, write_folder
from cfaug_hf.metrics import intrinsic
from cfaug_hf.report import augmentation_report
from cfaug_hf.testing import NegateAugmenter, tiny_seq2seq

FV_NEI = TaskSchema.fact_verification(nei=True)


def rewrite(claims):
    return [c.replace("France", "Spain") for c in claims]


def fever_rows(label_case=str.upper):
    return Dataset.from_dict({
        "claim": ["Paris is in France.", "Cats bark.", "Lyon is in France.", "Dogs fly."],
        "evidence": ["Paris is the capital of France.", "Cats meow.", "Lyon is a city in France.", "Dogs walk."],
        "label": [label_case(x) for x in ("SUPPORTS", "REFUTES", "SUPPORTS", "NOT ENOUGH INFO")]})


# ------------------------------------------------------------------------------------------------ labels
@pytest.mark.parametrize("case", [str.lower, str.upper, str.capitalize])
def test_counterfactual_labels_keep_the_input_spelling(case):
    out = CrossAugAugmenter(rewrite, FV_NEI, keep_nei=True).augment(fever_rows(case))
    assert set(out["label"]) == {case(x) for x in ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")}
    cf = [r for r in out if r["cf_is_counterfactual"]]
    assert {r["label"] for r in cf} == {case("REFUTES"), case("SUPPORTS")}
    assert {r["cf_original_label"] for r in cf} == {"SUPPORTS"}  # provenance uses the schema's names


# ---------------------------------------------------------------------------------------------- user files
def test_saving_never_deletes_user_files(tmp_path):
    run = tmp_path / "runs" / "demo"
    run.mkdir(parents=True)
    (run / "augmented.jsonl").write_text("{}\n")
    gen = Generator(*tiny_seq2seq(), num_beams=1, max_new_tokens=3)
    with pytest.raises(FolderNotEmptyError, match="augmented.jsonl"):
        gen.save_pretrained(run)
    assert (run / "augmented.jsonl").read_text() == "{}\n"
    gen.save_pretrained(run, overwrite=True)  # asked for: our files are added, the user's stay
    assert (run / "augmented.jsonl").read_text() == "{}\n" and (run / "model.safetensors").is_file()

    folder = gen.save_pretrained(tmp_path / "gen")
    (folder / "NOTES.md").write_text("how I trained it")
    gen.config.num_beams = 2
    gen.save_pretrained(folder)  # same kind: replaced in place, the user's notes kept
    assert (folder / "NOTES.md").read_text() == "how I trained it"
    assert Generator.from_pretrained(folder).config.num_beams == 2


def test_a_failed_save_leaves_the_folder_as_it_was(tmp_path):
    target = tmp_path / "thing"
    with write_folder(target, "widget") as tmp:
        (tmp / "x").write_text("1")
    with pytest.raises(RuntimeError):
        with write_folder(target, "widget") as tmp:
            (tmp / "x").write_text("2")
            raise RuntimeError("disk full")
    assert (target / "x").read_text() == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["thing"]  # no temporary folder left behind


def test_pull_updates_an_earlier_pull_and_keeps_user_files(tmp_path):
    import uuid

    from hub_cards import pull

    repo = f"alice/pull-{uuid.uuid4().hex[:8]}"
    gen = Generator(*tiny_seq2seq(), num_beams=1, max_new_tokens=3)
    gen.push_to_hub(repo, token="hf_alice_write")
    local = pull(repo, tmp_path / "local")
    (local / "mine.txt").write_text("keep")
    pull(repo, local)
    assert (local / "mine.txt").read_text() == "keep"
    assert Generator.from_pretrained(local).generate(["a cat"]) == gen.generate(["a cat"])


# ------------------------------------------------------------------------------------------ stale caches
def test_editing_a_custom_augmenter_invalidates_the_cache(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    source = textwrap.dedent("""
        from cfaug_hf import Augmenter, Counterfactual, RowResult

        class Shout(Augmenter):
            method = "shout"

            def augment_examples(self, examples):
                return [RowResult([Counterfactual({"text": ex["text"] + SUFFIX}, "negative", "shout")],
                                  ["produced:shout"]) for ex in examples]
        """)
    ds_path = tmp_path / "ds"
    Dataset.from_dict({"text": ["good film"], "label": ["positive"]}).save_to_disk(ds_path)
    outputs = []
    for suffix in ("!", "?"):
        (tmp_path / "user_aug.py").write_text(source.replace("SUFFIX", repr(suffix)))
        sys.modules.pop("user_aug", None)
        importlib.invalidate_caches()
        module = importlib.import_module("user_aug")
        aug = module.Shout(TaskSchema.sentiment())
        outputs.append(aug.augment(load_from_disk(ds_path))["text"][1])
    assert outputs == ["good film!", "good film?"]


# -------------------------------------------------------------------------------------------- statistics
def sentiment(n=12):
    return Dataset.from_dict({"text": [f"the film was good {i}" if i % 3 else f"a film {i}" for i in range(n)],
                              "label": ["positive", "negative"] * (n // 2)})


def test_stats_from_the_output_after_plain_map_cache_hits_and_workers(tmp_path):
    path = tmp_path / "ds"
    sentiment().save_to_disk(path)
    ds = load_from_disk(path)
    expected = {"rows_in": 12, "rows_out": 20, "counterfactuals": 8, "produced": {"negated": 8},
                "skipped": {"no_verb": 4}}
    for kwargs in ({}, {}, {"num_proc": 2}):  # first run, cache hit, workers
        out = ds.map(NegateAugmenter(TaskSchema.sentiment()), batched=True, batch_size=5, **kwargs)
        assert AugmentationStats.from_dataset(out).to_dict() == expected


@pytest.mark.parametrize("num_proc", [None, 2])
def test_augment_counts_every_reason_with_keep_original_false(tmp_path, num_proc):
    path = tmp_path / "ds"
    fever_rows().save_to_disk(path)
    ds = load_from_disk(path)
    for _ in range(2):  # the second call is a cache hit
        aug = CrossAugAugmenter(rewrite, FV_NEI, keep_original=False)
        out = aug.augment(ds, num_proc=num_proc, batch_size=2)
        assert not any(k == "trace" for k in out["cf_kind"]) and all(out["cf_is_counterfactual"])
        stats = aug.stats.to_dict()
        assert stats["rows_in"] == 4 and stats["rows_out"] == len(out) == 6
        assert stats["skipped"] == {"label_not_augmented": 1, "nei_dropped": 1}
        assert "untraced" not in str(stats)


def test_augment_counts_rows_the_method_drops():
    aug = CrossAugAugmenter(rewrite, FV_NEI)
    out = aug.augment(fever_rows())
    assert "Dogs fly." not in out["claim"]  # NOT ENOUGH INFO rows are left out, as in the paper
    assert aug.stats.skipped["nei_dropped"] == 1 and aug.stats.rows_in == 4 and aug.stats.rows_out == len(out)


# ------------------------------------------------------------------------------------------ metrics, report
def test_empty_text_is_not_scored_as_diverse():
    r = intrinsic.bleu_diversity(["", "the cat sat on the mat"], ["a dog", "the cat sat on the mat"])
    assert r["empty"] == 1 and r["n"] == 1 and round(r["inverse_bleu"]) == 0
    assert intrinsic.bleu_diversity(["  "], ["a"])["n"] == 0


def test_report_on_a_two_row_dataset(tmp_path, capsys):
    orig = Dataset.from_dict({"text": ["the film was good", "the film was bad"], "label": ["positive", "negative"]})
    aug = orig.map(NegateAugmenter(TaskSchema.sentiment()), batched=True)
    orig.save_to_disk(tmp_path / "o")
    aug.save_to_disk(tmp_path / "a")
    assert cli.main(["report", str(tmp_path / "o"), str(tmp_path / "a"), "--task", "sentiment", "--no-models",
                     "--out", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "competency_before.png").is_file() and (tmp_path / "r" / "report.md").is_file()
    report = augmentation_report(orig, aug, TaskSchema.sentiment(), fluency_model=None, embedder=None, probe=False)
    assert report.counts["counterfactuals"] == 2


# --------------------------------------------------------------------------------------- interrupted maps
_SLOW_MAP = """
import sys, time
from datasets import load_from_disk
from cfaug_hf import TaskSchema
from cfaug_hf.testing import NegateAugmenter

class Slow(NegateAugmenter):
    def augment_examples(self, examples):
        time.sleep(0.2)
        return super().augment_examples(examples)

ds = load_from_disk(sys.argv[1])
print("started", flush=True)
Slow(TaskSchema.sentiment()).augment(ds, batch_size=2, num_proc=2)
"""


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to find worker processes")
def test_a_killed_map_leaves_no_workers_and_its_temp_files_are_removed(tmp_path):
    path = tmp_path / "ds"
    sentiment(200).save_to_disk(path)
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_MAP, str(path)], stdout=subprocess.PIPE,
                            env={**os.environ, "TOKENIZERS_PARALLELISM": "false"})
    assert proc.stdout.readline().strip() == b"started"
    deadline = time.time() + 60
    while time.time() < deadline and not (len(_children(proc.pid)) >= 2 and len(list(path.glob("tmp*"))) >= 2):
        time.sleep(0.2)  # both workers are writing: both have started their watch
    workers = _children(proc.pid)
    assert len(workers) >= 2, "the map's workers did not start"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 30
    while time.time() < deadline and any(os.path.exists(f"/proc/{w}") for w in workers):
        for w in workers:  # reap zombies re-parented to us, if any
            with contextlib.suppress(ChildProcessError):  # most are not our children: nothing to reap
                os.waitpid(w, os.WNOHANG)
        time.sleep(0.2)
    alive = [w for w in workers if os.path.exists(f"/proc/{w}") and "Z" not in Path(f"/proc/{w}/stat").read_text()
             .rsplit(")", 1)[1].split()[:1]]
    assert not alive, f"workers {alive} outlived their parent"
    leftovers = list(path.glob("tmp*"))
    assert leftovers, "the killed map left no temporary file to clean"
    old = time.time() - 3600
    for f in leftovers:
        os.utime(f, (old, old))
    ds = load_from_disk(path)
    removed = remove_stale_temp_files(ds)
    assert sorted(removed) == sorted(str(f) for f in leftovers) and not list(path.glob("tmp*"))


# ------------------------------------------------------------------------------------------- conventions
def test_every_cli_option_has_help_and_every_command_a_description():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, command in sub.choices.items():
        assert command.description and len(command.description) > 40, name
        for action in command._actions:
            if action.dest != "help":
                assert action.help, f"cfaug {name} {action.option_strings or action.dest} has no help"
    assert "refused unless --overwrite" in sub.choices["pull"].description


def test_augment_takes_a_dataframe_and_an_iterable_dataset():
    import pandas as pd

    frame = pd.DataFrame({"text": ["the film was good", "a film"], "label": ["positive", "negative"]})
    aug = NegateAugmenter(TaskSchema.sentiment())
    out = aug.augment(frame)
    assert list(out["text"]) == ["the film was good", "the film was not good", "a film"]
    stream = Dataset.from_pandas(frame).to_iterable_dataset()
    rows = list(aug.augment(stream))
    assert [r["text"] for r in rows] == list(out["text"]) and aug.stats.rows_in == 2


def test_verbosity_helpers_reach_every_module_logger(caplog):
    import logging

    import cfaug_hf

    caplog.handler.setLevel(logging.DEBUG)
    cfaug_hf.set_verbosity_error()
    logging.getLogger("cfaug_hf.augmenter").warning("hidden")
    cfaug_hf.set_verbosity_info()
    logging.getLogger("cfaug_hf.augmenter").info("shown")
    cfaug_hf.set_verbosity_warning()
    assert [r.getMessage() for r in caplog.records] == ["shown"]
    with pytest.raises(ValueError, match="Unknown verbosity 'loud'"):
        cfaug_hf.set_verbosity("loud")


def test_report_finds_the_id_column_the_augmenter_used():
    orig = Dataset.from_dict({"id": ["a", "b"], "text": ["the film was good", "the film was bad"],
                              "label": ["positive", "negative"]})
    aug = NegateAugmenter(TaskSchema.sentiment(id_column="id")).augment(orig)
    report = augmentation_report(orig, aug, TaskSchema.sentiment(), fluency_model=None, embedder=None, probe=False)
    assert report.counts["counterfactuals"] == 2
