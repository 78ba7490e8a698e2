"""benchmarks/frozen_yardstick.py and the validity checks of benchmarks/debias/, on fixture data with a tiny
in-process encoder: features are cached by text (a second call encodes only new texts), seeds differ, the pair
features have five parts, and a table whose reference row does not beat ``none`` is marked as failing."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from datasets import Dataset

from cfaug_hf import TaskSchema
from cfaug_hf.testing import tiny_encoder
from needs import shared_data

ROOT = Path(__file__).resolve().parents[1]


def load(name):
    return importlib.import_module(f"benchmarks.{name}")


def yardstick_with_tiny_encoder(tmp_path, monkeypatch):
    yardstick = load("frozen_yardstick")
    model, tok = tiny_encoder()
    model.save_pretrained(tmp_path / "enc")
    tok.save_pretrained(tmp_path / "enc")
    monkeypatch.setattr(yardstick, "CACHE", tmp_path / "cache")
    return yardstick, str(tmp_path / "enc")


@pytest.fixture()
def store(tmp_path, monkeypatch):
    yardstick, encoder = yardstick_with_tiny_encoder(tmp_path, monkeypatch)
    return yardstick, yardstick.EncodingStore(encoder, max_length=32, batch_size=4)


def test_vectors_are_cached_by_text_and_reloaded_from_disk(store):
    yardstick, s = store
    first = s.vectors(["good film", "bad film", ("a claim", "its evidence")])
    assert first.shape[0] == 3 and s.encoded_now == 3
    again = s.vectors(["bad film", "a new one"])
    assert s.encoded_now == 4  # only the new text was encoded
    np.testing.assert_allclose(again[0], first[1])
    reopened = yardstick.EncodingStore(s.model_name, max_length=32)
    np.testing.assert_allclose(reopened.vectors(["good film"])[0], first[0])
    assert reopened.encoded_now == 0


def test_heads_train_per_seed_on_bootstrap_samples(store):
    yardstick, s = store
    schema = TaskSchema.nli()
    rows = {"premise": [f"a man plays {i}" for i in range(24)], "hypothesis": [f"someone is {i % 3}" for i in range(24)],
            "label": ["entailment", "neutral", "contradiction"] * 8}
    data = Dataset.from_dict(rows)
    x = yardstick.features(s, data, schema)
    assert x.shape[1] == 5 * s.vectors(["x"]).shape[1]  # [u, v, |u-v|, u*v, joint]
    runs = [yardstick.run_frozen(data, {"train": data}, schema, seed, head=head, store=s)
            for head in ("lr", "mlp") for seed in (0, 1)]
    assert all(0.0 <= r["train"] <= 1.0 for r in runs)
    with pytest.raises(ValueError, match="head must be 'lr' or 'mlp'"):
        yardstick.train_head(x, np.zeros(len(x), dtype=int), 0, "svm")


def test_validity_check_marks_a_blind_table():
    debias = load("leaderboard")

    def table(human, none):
        return {"rows": {"none": {"accuracy": {"contrast dev": none}}, "human": {"accuracy": {"contrast dev": human}}}}

    sees = debias.validity("sentiment", table([0.60, 0.62, 0.61], [0.50, 0.52, 0.51]))
    assert sees["passed"] and sees["gain"] == pytest.approx(10.0)
    blind = debias.validity("sentiment", table([0.52, 0.49, 0.55], [0.50, 0.52, 0.51]))
    assert not blind["passed"]
    right, wrong = "fever-symmetric: claim-only right", "fever-symmetric: claim-only wrong"

    def fever(held, on_right, on_wrong):
        return {"rows": {"none": {"accuracy": {"fever-symmetric": [0.55, 0.56], "fever held-out": held,
                                               right: on_right, wrong: on_wrong}}}}

    sees = debias.validity("fever", fever([0.83, 0.82], [0.80, 0.82], [0.60, 0.61]))
    assert sees["passed"] and sees["bias_gap"]["gap"] == pytest.approx(20.5)
    assert "claim-only model is right" in sees["summary"]
    assert not debias.validity("fever", fever([0.73, 0.72], [0.80, 0.82], [0.60, 0.61]))["passed"]  # in domain
    assert not debias.validity("fever", fever([0.83, 0.82], [0.66, 0.68], [0.60, 0.61]))["passed"]  # gap < 10
    assert not debias.validity("fever", fever([0.83, 0.82], [0.90, 0.60], [0.60, 0.59]))["passed"]  # within 2 sd
    older = {"rows": {"none": {"accuracy": {"fever-symmetric": [0.55, 0.56], "fever held-out": [0.83, 0.82]}}}}
    check = debias.validity("fever", older)  # a table made before the split cannot pass
    assert not check["passed"] and "before the claim-only split" in check["why"]


def test_top_layer_head_trains_over_cached_states(tmp_path, monkeypatch):
    yardstick, encoder = yardstick_with_tiny_encoder(tmp_path, monkeypatch)
    store = yardstick.StateStore(encoder, top=1, max_length=16, batch_size=4)
    schema = TaskSchema.fact_verification()
    data = Dataset.from_dict({"claim": [f"claim {i}" for i in range(12)], "evidence": [f"proof {i % 4}" for i in
                                                                                      range(12)],
                              "label": ["SUPPORTS", "REFUTES"] * 6})
    first = yardstick.run_top_layers(data, {"train": data}, schema, 0, top=1, epochs=1, store=store)
    assert 0.0 <= first["train"] <= 1.0 and store.encoded_now == 12
    again = yardstick.StateStore(encoder, top=1, max_length=16)
    states = again.states([("claim 3", "proof 3")])
    assert again.encoded_now == 0 and states[0].ndim == 2  # reloaded from disk, one row per token


def _shared_data_or_skip():
    data = shared_data()


def test_editor_rows_of_every_coverage_are_prefixes_of_one_order():
    """The coverage curve's points share their counterfactuals: a larger --editor-limit only adds rows, and no limit
    takes a row of the annotated quarter (whose human pairs the quarter-0 editor learned from)."""
    _shared_data_or_skip()
    debias = load("debias")
    train = debias.CONFIGS["sentiment"]()["train"]
    quarter = set(train.select(debias.annotated_rows(train, "sentiment"))["id"])
    subsets = []
    for limit in (20, 60, None):
        debias.settings.EDITOR_LIMIT = limit
        subsets.append(list(debias.editor_subset(train, "sentiment")["id"]))
    assert subsets[1][:20] == subsets[0] and subsets[2][:60] == subsets[1]
    assert len(subsets[2]) == len(train) - len(quarter) and not quarter & set(subsets[2])


@pytest.mark.parametrize("task", ["sentiment", "nli"])
def test_each_cross_fitting_editor_writes_only_rows_whose_pairs_it_never_saw(task):
    """No row of either crossfit row is written by an editor that learned from its human pair: each editor's rows
    lie outside the quarters it was trained on, and the two half editors together write every training row once."""
    _shared_data_or_skip()
    debias = load("debias")
    from benchmarks.debias.rows.editors import HALVES, quarter_rows, written_by

    train = debias.CONFIGS[task]()["train"]
    debias.settings.EDITOR_LIMIT = debias.settings.AUGMENT_LIMIT = None
    written = {}
    for quarters in ((0,), (1,), *HALVES):
        subset, whole = written_by(train, task, quarters)
        seen = set(train.select(quarter_rows(train, task, quarters))["id"])
        written[quarters] = set(subset["id"])
        assert whole and seen and not seen & written[quarters], quarters
    halves = [written[h] for h in HALVES]
    assert not halves[0] & halves[1] and halves[0] | halves[1] == set(train["id"])
    assert written[(0,)] | written[(1,)] == set(train["id"])
    outside_quarter_0 = len(train) - len(quarter_rows(train, task, (0,)))
    debias.settings.EDITOR_LIMIT = outside_quarter_0  # the coverage curve's 100%: every row of each half
    for half in HALVES:
        subset, whole = written_by(train, task, half)
        assert whole and set(subset["id"]) == written[half]
    debias.settings.EDITOR_LIMIT = outside_quarter_0 // 2  # 50%: a seeded half of each half, marked not whole
    subset, whole = written_by(train, task, HALVES[0])
    assert abs(len(subset) - len(halves[0]) / 2) <= 1 and not whole and set(subset["id"]) <= halves[0]
    debias.settings.EDITOR_LIMIT = None


def test_gpu_suite_parts_name_rows_their_configs_have():
    """Needs no benchmark data, so it runs on every clone (it once failed only where the data was)."""
    debias, suite = load("debias"), load("gpu_suite")
    from benchmarks.debias.registry import ROWS

    for name, config, rows, seconds, share in suite.PARTS:
        assert config in debias.CONFIGS, name
        for row in rows:
            assert row in ROWS and config in ROWS[row].configs, (name, row)
        assert seconds > 0 and (share is None or 0 < share <= 100)
    assert sum(p[3] for p in suite.PARTS) <= 900  # the parts fit one device call and a rerun


def test_gpu_suite_carries_each_cross_fitting_editor_a_part_reads():
    suite = load("gpu_suite")
    from benchmarks.debias.rows.editors import HALVES

    assert suite.cross_fitting_editors(["none", "crossfit"]) == [(1,)]
    assert suite.cross_fitting_editors(["crossfit (halves)"]) == list(HALVES)
    assert suite.cross_fitting_editors(["none", "amplify"]) == []
    names = {suite.carried_name(p[1], q) for p in suite.PARTS for q in suite.cross_fitting_editors(p[2])}
    assert {"nli-q1", "nli-q01", "nli-q23"} <= names
    # the half editors' weights stay behind for the transfer, as the quarter editors' do
    assert {"benchmarks/results/crossfit_editors/nli-q01/adapter_model.safetensors",
            "benchmarks/results/crossfit_editors/nli-q23/adapter_model.safetensors"} <= set(suite.SLIM)


def test_gpu_suite_unslim_puts_back_every_file_slim_moved_aside(tmp_path, monkeypatch):
    """Some of SLIM is found by globbing the tree (the archived generation parts, the judges): once they are aside
    the glob no longer finds them, and an undo that read SLIM again left them behind, deleted from the tree."""
    suite = load("gpu_suite")
    files = ["benchmarks/results/editor_parts/a.jsonl.gz", "benchmarks/results/judges/j.safetensors", "kept.txt"]
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(rel)
    monkeypatch.setattr(suite, "ROOT", tmp_path)
    monkeypatch.setattr(suite, "_tree_mib", lambda: 0.0)
    monkeypatch.setattr(suite, "SLIM", files[:2])
    suite.slim()
    assert [(tmp_path / rel).is_file() for rel in files] == [False, False, True]
    monkeypatch.setattr(suite, "SLIM", [])  # what a fresh process globs after the move
    suite.slim(undo=True)
    assert [(tmp_path / rel).read_text() for rel in files] == files
    assert not [f for f in (tmp_path / ".slim").rglob("*") if f.is_file()]


def test_a_gpu_suite_smoke_run_unpacks_the_data_outside_the_carry(tmp_path, monkeypatch):
    """An unpacked copy left in gpu_carry/ by a smoke run travelled with the next device call: 18 MiB over the
    transfer limit."""
    import argparse
    import io
    import tarfile

    suite = load("gpu_suite")
    carry = tmp_path / "gpu_carry"
    carry.mkdir()
    with tarfile.open(carry / "shared_data.tar.xz", "w:xz") as tar:
        info = tarfile.TarInfo("MANIFEST.md")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"data\n"))
    monkeypatch.setattr(suite, "CARRY", carry)
    monkeypatch.setattr(suite, "ROOT", tmp_path)
    monkeypatch.setattr(suite, "PARTS", [])
    args = argparse.Namespace(out=str(tmp_path / "out"), data=None, smoke=True, parts=None, budget_s=60, commit="c")
    assert suite.run(args) == 0
    assert sorted(p.name for p in carry.iterdir()) == ["shared_data.tar.xz"]
    assert (tmp_path / "benchmarks" / ".cache" / "gpu_suite_shared_data" / "MANIFEST.md").read_text() == "data\n"


def test_the_gpu_suite_carries_minilm_packed_and_unpacks_it_where_the_run_reads_it(tmp_path, monkeypatch):
    """MiniLM in half precision is most of the carry (44 MiB of 60); packed, the transfer fits under the limit
    (60.5 MiB unpacked on 2026-12-07). The device unpacks it inside the carry, a smoke run outside it, and a second
    run reuses what the first unpacked."""
    import tarfile

    suite = load("gpu_suite")
    carry = tmp_path / "gpu_carry"
    (carry / "minilm").mkdir(parents=True)
    (carry / "minilm" / "config.json").write_text("{}")
    monkeypatch.setattr(suite, "CARRY", carry)
    monkeypatch.setattr(suite, "ROOT", tmp_path)
    monkeypatch.setattr(suite, "MINILM_PACKED", carry / "minilm.tar.xz")
    with tarfile.open(carry / "minilm.tar.xz", "w:xz") as tar:
        tar.add(carry / "minilm", arcname="minilm")
    import shutil

    shutil.rmtree(carry / "minilm")
    smoke = suite.unpacked_minilm(smoke=True)
    assert smoke == tmp_path / "benchmarks" / ".cache" / "gpu_suite_minilm" / "minilm"
    assert (smoke / "config.json").read_text() == "{}" and sorted(p.name for p in carry.iterdir()) == ["minilm.tar.xz"]
    device = suite.unpacked_minilm()
    assert device == carry / "minilm" and (device / "config.json").is_file()
    (carry / "minilm.tar.xz").unlink()  # unpacked already: read as it is
    assert suite.unpacked_minilm() == device


def test_gpu_suite_carries_crossaug_from_wherever_the_row_finds_it(tmp_path, monkeypatch):
    """On a fresh machine CrossAug's rows of every FEVER training row come from the archived parts without a cache
    folder, and `prepare` reported them missing ("run benchmarks.debias --rows crossaug first"): the carry now saves
    what `crossaug_counterfactuals` returns, however it found it, for the device and (outside the carry) for a smoke
    run."""
    suite = load("gpu_suite")
    from datasets import Dataset, load_from_disk

    from benchmarks.debias import configs
    from benchmarks.debias.rows import crossaug

    cfs = Dataset.from_dict({"id": ["f-1c"], "claim": ["A is not B."], "cf_source_id": ["f-1"]})
    monkeypatch.setattr(crossaug, "crossaug_counterfactuals", lambda train: cfs)
    # The training rows themselves come from ../shared/data, which a clone elsewhere does not have; the row
    # function above never reads them.
    monkeypatch.setitem(configs.CONFIGS, "fever", lambda: {"train": Dataset.from_dict({"id": ["f-1"]})})
    monkeypatch.setattr(suite, "CARRY", tmp_path / "gpu_carry")
    monkeypatch.setattr(suite, "ROOT", tmp_path)
    assert suite.carry_crossaug("fever") == "1 counterfactuals of every training row"
    carried = tmp_path / "gpu_carry" / "counterfactuals" / "fever-crossaug"
    assert load_from_disk(str(carried))["claim"] == ["A is not B."]
    suite.carry_crossaug("fever", smoke=True)
    smoke = suite.crossaug_carried("fever", smoke=True)
    assert smoke == tmp_path / "benchmarks" / ".cache" / "gpu_suite_crossaug" / "fever"
    assert load_from_disk(str(smoke)).num_rows == 1


def test_gpu_suite_leaves_behind_what_only_cpu_runs_read():
    suite = load("gpu_suite")
    slim = set(suite.SLIM)
    assert "benchmarks/results/judges/nli-mlp.safetensors" in slim
    assert any(rel.startswith("benchmarks/results/editor_parts/") for rel in slim)
    assert "cfaug_hf/data/checkers/sentiment/adapter_model.safetensors" in slim
    assert not any(rel.startswith("cfaug_hf/data/checkers/claims/") for rel in slim)  # FEVER's part reads it there


@pytest.mark.parametrize("option", ["--editor-data", "--core-editor-data"])
def test_debias_refuses_reused_counterfactuals_for_an_editor_it_does_not_have(monkeypatch, capsys, option):
    run = load("debias.run")
    for item, message in (("nli_q2=/tmp/x", "'nli_q2' names no editor; expected one of sentiment, sentiment_q1, "
                                            "sentiment_q01, sentiment_q23, nli, nli_q1, nli_q01, nli_q23, "
                                            "nli_all, nli_all_q1, nli_premise, nli_premise_q1, nli_premise_x2"),
                          ("nli", "expected TASK=FOLDER, got 'nli'")):
        monkeypatch.setattr("sys.argv", ["debias", "--config", "nli", option, item])
        with pytest.raises(SystemExit):
            run.main()
        err = capsys.readouterr().err
        assert f"{option}" in err and message in err


def test_editor_data_keys_are_registered_by_the_rows_that_read_them_once_each(monkeypatch):
    """Each row module registers the --editor-data keys it reads (a new row needs no edit to run.py); a key
    registered twice is refused, and the option's help names every key with what it holds."""
    load("debias.run")
    from benchmarks.debias import registry
    from benchmarks.debias.run import build_parser

    assert {"sentiment_q23", "nli_all_q1", "nli_premise_x2"} <= set(registry.REUSE_KEYS)
    with pytest.raises(ValueError, match="'nli_all' is registered twice"):
        registry.reusable("nli_all", "again")
    monkeypatch.setitem(registry.REUSE_KEYS, "fever_new", "a new row's counterfactuals")
    helps = {a.dest: a.help for a in build_parser()._actions}
    assert "fever_new (a new row's counterfactuals)" in helps["editor_data"]
    assert "nli_premise_x2 (the NLI premise editor's counterfactuals" in helps["editor_data"]


def test_a_coverage_curve_refuses_a_row_its_task_does_not_have(monkeypatch, capsys):
    curve = load("coverage_curve")
    monkeypatch.setattr("sys.argv", ["coverage_curve", "--task", "fever", "--rows", "none", "amplify"])
    with pytest.raises(SystemExit):
        curve.main()
    err = capsys.readouterr().err
    assert "--rows amplify: not a row of the fever curve" in err and "crossaug+checker" in err
    for task, spec in curve.CURVES.items():  # every curve's rows exist for its configuration
        from benchmarks.debias.registry import ROWS

        assert spec.rows[0] == "none" and set(spec.shared_rows) <= set(spec.rows), task
        assert all(task in ROWS[r].configs for r in spec.rows), task


def test_every_archived_generation_run_has_a_check_parts_command():
    """Each archive in editor_parts/ is served to later code only through its --check-parts check; the checks are
    registered by the row families (no list in the command line), so a family that archives must register one."""
    load("debias")
    from benchmarks.debias.registry import ARCHIVE_CHECKS, archive_check
    from benchmarks.debias.run import build_parser

    parts = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "editor_parts"
    families = {f.name.split("_editor_")[0] if "_editor_" in f.name else "fever_crossaug"
                for f in parts.glob("*.jsonl.gz")}
    assert families and families <= set(ARCHIVE_CHECKS)
    check_option = next(a for a in build_parser()._actions if a.dest == "check_parts")
    assert set(check_option.choices) == set(ARCHIVE_CHECKS)
    assert all((check.__doc__ or "").strip() for check in ARCHIVE_CHECKS.values())
    with pytest.raises(ValueError, match="registered twice"):
        archive_check("nli")(lambda: None)


def test_generation_parts_survive_in_their_archive(tmp_path):
    """benchmarks.debias's cache is not kept between sessions; its editor parts are archived to a committed file after each
    part and restored from it, with their features, so a later session resumes where this one stopped."""
    from datasets import load_from_disk

    debias = load("debias")
    parts = tmp_path / "run.parts"
    for i in range(2):
        Dataset.from_dict({"text": [f"a{i}", f"b{i}"], "cf_outcome": [["produced:editor"], []]}).save_to_disk(
            str(parts / f"{i:05d}-2"))
    archive = tmp_path / "archive" / "sentiment_run.jsonl.gz"
    debias.archive_parts(parts, archive)
    back = tmp_path / "again.parts"
    debias.restore_parts(archive, back)
    restored = load_from_disk(str(back / "00001-2"))
    assert sorted(p.name for p in back.iterdir()) == ["00000-2", "00001-2"]
    assert restored.to_dict() == {"text": ["a1", "b1"], "cf_outcome": [["produced:editor"], []]}
    assert restored.features == load_from_disk(str(parts / "00001-2")).features


class CountingAugmenter:
    """A stand-in for an expensive augmenter in the generation cache: a fixed fingerprint, negation as its rows,
    and a count of the calls (a restored part makes none)."""

    def __init__(self, fingerprint, keep_original=True):
        self.fp, self.calls, self.keep_original = fingerprint, 0, keep_original

    filters = ()

    def fingerprint(self):
        return self.fp

    def components(self):
        return {}

    def augment(self, rows):
        from cfaug_hf.testing import NegateAugmenter

        self.calls += 1
        return NegateAugmenter(TaskSchema.sentiment(), keep_original=self.keep_original).augment(rows)


def test_parts_archived_under_an_equivalent_fingerprint_serve_the_new_code(tmp_path, monkeypatch):
    """A refactoring changes the augmenter's fingerprint (it covers the code) but not its rows: once
    ``--check-parts`` found them equal, the parts archived under the old fingerprint are restored, not regenerated."""
    import json

    debias = load("debias")
    monkeypatch.setattr(debias.settings, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(debias.settings, "EQUIVALENT", tmp_path / "archive" / "equivalent.json")
    subset = Dataset.from_dict({"text": ["it was good", "it was bad", "it was fine"],
                                "label": ["positive", "negative", "positive"]})

    archive = tmp_path / "archive" / "sentiment"
    old = CountingAugmenter("a" * 64)
    first = debias.cached_augment(old, subset, "editor", "old", part_rows=2, parts_key="k" * 12, archive=archive)
    assert old.calls == 2
    new = CountingAugmenter("b" * 64)
    (tmp_path / "archive" / "equivalent.json").write_text(json.dumps({"b" * 12: {"archived_as": "a" * 12}}))
    monkeypatch.setattr(debias.settings, "CACHE", tmp_path / "fresh-cache")  # a later session: nothing cached
    again = debias.cached_augment(new, subset, "editor", "new", part_rows=2, parts_key="k" * 12, archive=archive)
    assert new.calls == 0 and again.to_dict() == first.to_dict()


def test_a_capped_fever_run_reads_crossaug_from_the_archived_whole_run(tmp_path, monkeypatch):
    """A --max-train run on a fresh machine generated CrossAug's rows of its sample again (11 minutes for 2000 FEVER
    rows) although the whole training set's run was archived under an equivalent fingerprint: it reads them from
    there, in the order generating them gives (the sample's), and only where every row of the sample is there with
    the same claim."""
    import json

    debias = load("debias")
    from benchmarks.debias.rows import crossaug as rows

    monkeypatch.setattr(debias.settings, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(debias.settings, "PARTS_ARCHIVE", tmp_path / "archive")
    monkeypatch.setattr(debias.settings, "EQUIVALENT", tmp_path / "archive" / "equivalent.json")
    monkeypatch.setattr(debias.settings, "REUSE", {})
    monkeypatch.setattr(debias.settings, "AUGMENT_LIMIT", None)
    columns = {"cf_is_counterfactual": [False, True, False, True, False], "cf_kind": ["original", "c'+e"] * 2
               + ["original"], "cf_source_id": ["f-1", "f-1", "f-2", "f-2", "f-3"]}
    whole = Dataset.from_dict({"id": ["f-1", "f-1c", "f-2", "f-2c", "f-3"],
                               "claim": ["A is B.", "A is not B.", "C is D.", "C is never D.", "E is F."], **columns})
    parts = tmp_path / "run.parts"
    whole.save_to_disk(str(parts / "00000-5"))
    debias.archive_parts(parts, tmp_path / "archive" / f"crossaug_crossaug_{'w' * 12}_{'a' * 12}.jsonl.gz")
    (tmp_path / "archive" / "equivalent.json").write_text(json.dumps({"b" * 12: {"archived_as": "a" * 12}}))
    monkeypatch.setattr(rows, "crossaug_augmenter", lambda: CountingAugmenter("b" * 64))
    sample = Dataset.from_dict({"id": ["f-2", "f-1"], "claim": ["C is D.", "A is B."]})
    got = rows.crossaug_counterfactuals(sample)
    assert got["claim"] == ["C is never D.", "A is not B."]  # the sample's order, counterfactuals only
    assert rows._archived_superset(Dataset.from_dict({"id": ["f-2"], "claim": ["C is E."]}),
                                   CountingAugmenter("b" * 64)) is None  # the same id with another claim
    assert rows._archived_superset(Dataset.from_dict({"id": ["f-9"], "claim": ["G."]}),
                                   CountingAugmenter("b" * 64)) is None
    assert rows._archived_superset(sample, CountingAugmenter("c" * 64)) is None  # no equivalence recorded
    # the same sample read from a cached run over the whole set: the same rows in the same order (the cache kept
    # the whole set's order, so a seed trained on another order than on a fresh machine)
    whole.save_to_disk(str(tmp_path / "cache" / f"crossaug_{'w' * 12}_{'b' * 12}"))
    assert rows._cached_superset(sample, CountingAugmenter("b" * 64)) is not None
    assert rows.crossaug_counterfactuals(sample).to_dict() == got.to_dict()


def test_a_generation_part_with_no_counterfactual_is_archived_and_restored(tmp_path, monkeypatch):
    """A part none of whose rows gave a counterfactual is a dataset with no rows: it must save, reload, survive
    in the archive (a line naming the part alone) and come back from it in a later session without being generated
    again; ``--check-parts`` compares an empty part 0 as empty."""
    import json

    debias = load("debias")
    from benchmarks.debias import augmented

    monkeypatch.setattr(debias.settings, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(debias.settings, "PARTS_ARCHIVE", tmp_path / "archive")
    monkeypatch.setattr(debias.settings, "EQUIVALENT", tmp_path / "archive" / "equivalent.json")
    subset = Dataset.from_dict({"text": ["a film", "it was bad", "no verb here"],
                                "label": ["positive", "negative", "positive"]})

    archive = tmp_path / "archive" / "sentiment"
    first = CountingAugmenter("a" * 64, keep_original=False)
    made = debias.cached_augment(first, subset, "editor", "first", part_rows=1, parts_key="k" * 12, archive=archive)
    assert first.calls == 3 and made["text"] == ["it was not bad"]
    lines = [json.loads(line) for line in __import__("gzip").open(next(archive.parent.glob("sentiment_*.jsonl.gz")),
                                                                  "rt")]
    assert [sorted(line) == ["_part"] for line in lines] == [True, False, True]
    monkeypatch.setattr(debias.settings, "CACHE", tmp_path / "fresh-cache")  # a later session: nothing cached
    again = CountingAugmenter("a" * 64, keep_original=False)
    back = debias.cached_augment(again, subset, "editor", "again", part_rows=1, parts_key="k" * 12, archive=archive)
    assert again.calls == 0 and back.to_dict() == made.to_dict() and back.features == made.features
    report = augmented.record_equivalence(CountingAugmenter("b" * 64, keep_original=False), subset.select([0]),
                                          "sentiment_*.jsonl.gz")
    assert report["archives"]["a" * 12] == {"equal": True, "archived_rows": 0, "parts": 3}


def test_a_chain_of_equivalent_archives_restores_every_part_any_of_them_holds(tmp_path, monkeypatch):
    """Each code change is checked against the archive the last check named. When that archive holds fewer parts
    than an older one (a run under that code stopped after part 0), the restore follows the chain to the older
    archive instead of generating the rest again; and a check that finds several equal archives names the fullest."""
    import json

    debias = load("debias")
    from benchmarks.debias import augmented

    monkeypatch.setattr(debias.settings, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(debias.settings, "PARTS_ARCHIVE", tmp_path / "archive")
    monkeypatch.setattr(debias.settings, "EQUIVALENT", tmp_path / "archive" / "equivalent.json")
    subset = Dataset.from_dict({"text": ["it was good", "it was bad", "it was fine", "it was dull"],
                                "label": ["positive", "negative", "positive", "negative"]})
    archive = tmp_path / "archive" / "sentiment"
    full = debias.cached_augment(CountingAugmenter("a" * 64), subset, "editor", "full", part_rows=1,
                                 parts_key="k" * 12, archive=archive)
    monkeypatch.setattr(debias.settings, "CACHE", tmp_path / "cache-b")  # under code b, only part 0 was run
    debias.cached_augment(CountingAugmenter("b" * 64), subset.select([0]), "editor", "b", part_rows=1,
                          parts_key="k" * 12, archive=archive)
    assert len(list(archive.parent.glob("sentiment_*.jsonl.gz"))) == 2
    (archive.parent / "equivalent.json").write_text(json.dumps({"b" * 12: {"archived_as": "a" * 12},
                                                                "c" * 12: {"archived_as": "b" * 12}}))
    assert augmented.equivalent_fingerprints("c" * 12) == ["b" * 12, "a" * 12]

    monkeypatch.setattr(debias.settings, "CACHE", tmp_path / "fresh-cache")  # a later session under code c
    later = CountingAugmenter("c" * 64)
    back = debias.cached_augment(later, subset, "editor", "c", part_rows=1, parts_key="k" * 12, archive=archive)
    assert later.calls == 0 and back.to_dict() == full.to_dict()

    report = augmented.record_equivalence(CountingAugmenter("d" * 64), subset.select([0]), "sentiment_*_[ab]*.jsonl.gz")
    assert {k: v["parts"] for k, v in report["archives"].items()} == {"a" * 12: 4, "b" * 12: 1}
    assert json.loads((archive.parent / "equivalent.json").read_text())["d" * 12]["archived_as"] == "a" * 12
    (archive.parent / "equivalent.json").write_text(json.dumps({"e" * 12: {"archived_as": "f" * 12},
                                                                "f" * 12: {"archived_as": "e" * 12}}))
    assert augmented.equivalent_fingerprints("e" * 12) == ["f" * 12]  # a cycle ends the chain


def test_every_debias_row_registers_itself_with_its_configurations(capsys):
    """A training-set row is one registered function: it names the configurations it applies to and says what it
    is (``--list-rows``); an unknown row on the command line is refused before any data loads."""
    from benchmarks.debias import CONFIGS
    from benchmarks.debias.registry import ROWS, row
    from benchmarks.debias.run import build_parser

    assert {"none", "human", "eda", "reweight", "crossaug", "race", "icda", "core", "amplify", "crossfit"} <= set(ROWS)
    for entry in ROWS.values():
        assert entry.configs and set(entry.configs) <= set(CONFIGS) and entry.help, entry.name
    with pytest.raises(ValueError, match="registered twice"):
        row("none", configs=("fv",))(lambda train, seed, task: train)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--rows", "nope"])
    assert "invalid choice: 'nope'" in capsys.readouterr().err


def test_every_debias_option_a_table_records_is_json(tmp_path):
    """The results keep the run's options; a path option (``--results-dir``) once broke the JSON write after an
    hour of training. Every option, given a value of its own type, must serialise."""
    import json

    from benchmarks.debias.run import build_parser, settings_of

    args = build_parser().parse_args(["--results-dir", str(tmp_path), "--editor-data", f"sentiment={tmp_path}",
                                      "--crossaug-data", str(tmp_path), "--commit", "abc", "--device-note", "CPU",
                                      "--max-train", "10", "--augment-limit", "5", "--editor-limit", "5", "--bf16"])
    recorded = json.loads(json.dumps(settings_of(args)))
    assert recorded["results_dir"] == str(tmp_path) and "rows" not in recorded and "config" not in recorded


def test_the_crossaug_rows_load_the_shipped_generator_and_train_nothing(monkeypatch):
    """The rows once trained their generator at run time under a 300 s budget (20 steps in one session, 49 in
    another), so two machines measured different generators and no archive could serve the next session."""
    load("debias")
    from benchmarks.debias.rows import crossaug

    from cfaug_hf.methods.crossaug import recipes

    def no_training(*args, **kwargs):
        raise AssertionError("the benchmark trained a generator")

    monkeypatch.setattr(recipes, "negative_claim_generator", no_training)
    augmenter = crossaug.crossaug_augmenter()
    shipped = recipes.default_claim_generator()
    assert augmenter.generator.weights_fingerprint() == shipped.weights_fingerprint()
    assert augmenter.generator.config.num_return_sequences == 5 and augmenter.generator.config is not shipped.config


@pytest.mark.shipped_checker  # the separate judge of RACE's claims is the shipped fact-verification checker
def test_races_fever_row_uses_the_shipped_components_and_writes_rows_of_the_fever_schema(tmp_path, monkeypatch):
    """``race (shipped)`` trains nothing (the fv-ood row's generator and checker are the benchmark's own, trained
    under a time budget), and its counterfactuals carry FEVER's two labels, so they join the training rows."""
    load("debias")
    import benchmarks.race_intrinsic as intrinsic
    from benchmarks.debias import settings
    from benchmarks.debias.augmented import with_counterfactuals
    from benchmarks.debias.registry import ARCHIVE_CHECKS
    from benchmarks.debias.rows import race

    from cfaug_hf.data import load_feverous_sample

    def no_training(*args, **kwargs):
        raise AssertionError("the row trained a component")

    monkeypatch.setattr(intrinsic, "generator_model", no_training)
    monkeypatch.setattr(intrinsic, "checker_model", no_training)
    monkeypatch.setattr(settings, "CACHE", tmp_path)
    monkeypatch.setattr(settings, "PARTS_ARCHIVE", tmp_path / "archive")
    monkeypatch.setattr(settings, "AUGMENT_LIMIT", None)
    monkeypatch.setattr(race, "RACE_DECODING", {"num_beams": 2, "num_candidates": 1, "max_new_tokens": 16})
    train = load_feverous_sample().select(range(3)).select_columns(["id", "claim", "evidence", "label"])
    cfs = race.shipped_counterfactuals(train)
    note = settings.NOTES["race (shipped)"]
    assert note["rows_augmented"] == 3 and sum(note["counterfactuals"].values()) == len(cfs)
    # every row augmented: the run is archived, so a later session reads it instead of generating it again
    assert len(list((tmp_path / "archive").glob("race_shipped_race-shipped_*.jsonl.gz"))) == 1
    assert "fever_race_shipped" in ARCHIVE_CHECKS
    assert {"generator", "checker"} <= set(note["components"])  # recorded, so a rebuilt component shows
    assert set(cfs["label"]) <= {"SUPPORTS", "REFUTES"} and set(cfs["cf_source_id"]) <= set(train["id"])
    assert len(with_counterfactuals(train, cfs)) == len(train) + len(cfs)


@pytest.mark.parametrize("task", ["sentiment", "nli"])
def test_the_benchmark_editors_learned_from_one_quarter_not_from_every_pair(task, tmp_path, monkeypatch):
    """The editor rows never use the shipped editor, which learned from every human pair (so it saw the pair of every
    row it would write); quarter 0's editor is its committed copy when the cache is empty."""
    from benchmarks.debias import settings
    from benchmarks.debias.rows.editors import CROSSFIT_EDITORS, editor_of

    monkeypatch.setattr(settings, "CACHE", tmp_path)
    for quarter in (0, 1):
        config = json.loads((CROSSFIT_EDITORS / f"{task}-q{quarter}" / "cfaug_editor.json").read_text())
        assert "quarter" in config["training"]["data"], (task, quarter)
    monkeypatch.setattr("cfaug_hf.Editor.from_pretrained", classmethod(lambda cls, folder: Path(folder)))
    assert editor_of(task, (0,)) == CROSSFIT_EDITORS / f"{task}-q0"
    with pytest.raises(SystemExit, match="--quarter 1 2 3"):
        editor_of(task, (1, 2, 3))


def test_flip_rate_curves_render_a_row_per_editor_with_labels_per_target():
    editors = load("editors")
    curve = {"rows": 200, "sampling_seconds": 1.0, "flip_rate": {"1": 20.0, "4": 50.0}, "judge": "a judge",
             "judge_flip_rate": {"human": {"all": 56.5, "neutral": 46.2}, "1": {"all": 30.5, "neutral": 19.2},
                                 "4": {"all": 50.5, "neutral": 36.5}}}
    lines = editors.curve_tables({"nli": {"curves": {"quarter 0": curve, "every pair": {**curve, "rows": 100}}}})
    assert any(line.startswith("| nli | quarter 0 | 200 | 20.0 | 50.0 |") for line in lines)
    assert any(line.startswith("| nli | every pair | 100 |") for line in lines)
    assert "| nli | quarter 0 | 56.5 (neutral 46.2) | 30.5 (neutral 19.2) | 50.5 (neutral 36.5) |" in lines
    assert editors.curve_tables({"nli": {"rows": 60}}) == []


def test_the_coverage_plot_keeps_rows_of_one_share_apart_and_its_legend_off_the_points(tmp_path, monkeypatch):
    """Several rows measured only at full coverage (crossfit, crossfit (halves)) sat on one x and hid each other's
    error bars, and the legend covered points: each row is drawn at its own small offset, the legend outside."""
    pytest.importorskip("matplotlib")
    from matplotlib import pyplot as plt

    curve = load("coverage_curve")
    cell = {"gain": 1.0, "two_sd": 2.0}
    summary = {"task": "sentiment", "contrast_test": "contrast dev", "yardstick": "tiny", "covered_rows": 10,
               "covers": "rows", "points": [{"share": 100.0, "gains": {r: {"contrast dev": cell}
                                                                      for r in ("crossfit", "crossfit (halves)")}}]}
    drawn = []
    monkeypatch.setattr(plt.Figure, "savefig", lambda fig, path, **kw: drawn.append(fig))
    curve.plot(summary, tmp_path / "plot.png")
    (ax,) = drawn[0].axes
    xs = [line.get_xdata()[0] for line in ax.lines if line.get_marker() == "o"]
    assert len(xs) == 2 and len(set(xs)) == 2 and all(abs(x - 100.0) < 5 for x in xs)
    box = ax.get_legend().get_window_extent(drawn[0].canvas.get_renderer())
    assert box.x0 >= ax.get_window_extent().x1  # the legend starts right of the axes


def test_rows_declare_what_the_leaderboard_and_the_curves_show_of_them():
    """A new row needs no edit to a table in leaderboard.py or coverage_curve.py: its title, its same-rows human
    reference and whether it is full-coverage only are arguments of `registry.row`."""
    board, curve = load("leaderboard"), load("coverage_curve")
    rows = board.registered_rows()
    assert all(r.title for r in rows.values())  # every row has a leaderboard title
    assert board.row_title("crossfit (halves)").startswith("+ cross-fitted learned editors, two halves")
    assert board.row_title("a row an old table kept") == "a row an old table kept"
    assert {n: r.same_rows for n, r in rows.items() if r.same_rows}["editor+checker"] == "human (editor rows)"
    assert all(r.same_rows in rows for r in rows.values() if r.same_rows)
    # the curve's full-coverage-only rows are exactly those registered so, in registration order
    assert curve.full_only_rows() == tuple(n for n, r in rows.items() if r.full_coverage_only)
    assert curve.full_only_rows()[:3] == ("crossfit", "crossfit (halves)", "crossfit (all targets)")


def test_a_resumed_or_merged_table_runs_again_the_rows_made_with_a_component_changed_since(tmp_path, monkeypatch):
    """coverage_curve resumes a share after its finished rows and ``debias --merge`` keeps an earlier table's rows:
    neither may keep a row whose editor, checker or generator has changed since, while a card edit changes nothing."""
    augmented, curve = load("debias.augmented"), load("coverage_curve")
    folder = tmp_path / "cfaug_hf" / "data" / "editors" / "sentiment"
    folder.mkdir(parents=True)
    manifest = {"kind": "editor", "digests": {"README.md": "sha256:a", "adapter_model.safetensors": "sha256:b"}}
    (folder / "cfaug_manifest.json").write_text(json.dumps(manifest))
    monkeypatch.setattr(augmented, "ROOT", tmp_path)
    monkeypatch.setattr(augmented, "COMPONENT_FOLDERS", (tmp_path / "cfaug_hf" / "data",))
    made = augmented.component_files()
    assert list(made) == ["cfaug_hf/data/editors/sentiment"]
    rows = {"none": {"accuracy": {"dev": [0.5, 0.6]}},
            "human": {"accuracy": {"dev": [0.6, 0.7]}, "augmentation": {"rows": 3}},
            "editor+checker": {"accuracy": {"dev": [0.7, 0.7]},
                               "augmentation": {"rows": 3, "components": {"editor": "e1", "checker": "c1"}}},
            "crossfit": {"accuracy": {"dev": [0.7, 0.8]},
                         "augmentation": {"quarter 0 editor": {"components": {"editor": "e1"}}}}}
    table = tmp_path / "share.json"
    table.write_text(json.dumps({"seeds": [0, 1], "rows": rows, "component_files": made}))
    assert curve.finished_rows(table, [0, 1]) == set(rows)

    manifest["digests"]["README.md"] = "sha256:card edited"
    (folder / "cfaug_manifest.json").write_text(json.dumps(manifest))
    assert augmented.stale_rows(json.loads(table.read_text())) == ([], [])

    # Figures measured of the component (build_editors --record) change its config file, not its outputs.
    config = {"generator": {"num_return_sequences": 4}, "training": {"eval_independent_judge": {"all": 58.5}}}
    (folder / "cfaug_editor.json").write_text(json.dumps(config))
    manifest["digests"]["cfaug_editor.json"] = "sha256:config"
    (folder / "cfaug_manifest.json").write_text(json.dumps(manifest))
    made = augmented.component_files()
    table.write_text(json.dumps({"seeds": [0, 1], "rows": rows, "component_files": made}))
    config["training"]["eval_independent_judge"] = {"all": 61.0}
    config["training"]["eval_read_by_hand"] = "28 of 50"
    (folder / "cfaug_editor.json").write_text(json.dumps(config))
    manifest["digests"]["cfaug_editor.json"] = "sha256:config with figures"
    (folder / "cfaug_manifest.json").write_text(json.dumps(manifest))
    assert augmented.stale_rows(json.loads(table.read_text())) == ([], [])
    config["generator"]["num_return_sequences"] = 8  # a setting: the outputs change
    (folder / "cfaug_editor.json").write_text(json.dumps(config))
    assert augmented.stale_rows(json.loads(table.read_text()))[1] == ["cfaug_hf/data/editors/sentiment"]
    config["generator"]["num_return_sequences"] = 4
    (folder / "cfaug_editor.json").write_text(json.dumps(config))

    manifest["digests"]["adapter_model.safetensors"] = "sha256:retrained"
    (folder / "cfaug_manifest.json").write_text(json.dumps(manifest))
    earlier = json.loads(table.read_text())
    assert augmented.stale_rows(earlier) == (["editor+checker", "crossfit"], ["cfaug_hf/data/editors/sentiment"])
    assert curve.finished_rows(table, [0, 1]) == {"none", "human"}

    run = load("debias.run")
    results = {"config": "sentiment", "seeds": [0, 1], "train_rows": 10, "tests": {"dev": 4}, "rows": {},
               "settings": {}, "component_files": augmented.component_files()}
    monkeypatch.setattr(run.settings, "RESULTS", tmp_path)
    (tmp_path / "debias_sentiment_frozen-lr.json").write_text(json.dumps({**earlier, **{
        k: results[k] for k in ("config", "train_rows", "tests", "settings")}}))
    kept = run.earlier_run(results, "frozen-lr")
    assert set(kept["rows"]) == {"none", "human"}
    (tmp_path / "debias_sentiment_frozen-lr.json").write_text(json.dumps({**earlier, "component_files": None, **{
        k: results[k] for k in ("config", "train_rows", "tests", "settings")}}))
    assert set(run.earlier_run(results, "frozen-lr")["rows"]) == set(rows)  # a table from before the record


@pytest.mark.parametrize("head", ["lr", "mlp"])
@pytest.mark.parametrize("classes", [2, 3])
def test_a_saved_head_predicts_as_the_fitted_pipeline(tmp_path, head, classes):
    yardstick = load("frozen_yardstick")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 8)).astype(np.float32)
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5 if classes == 3 else 0)
    model = yardstick.train_head(x, y, 0, head)
    saved = yardstick.SavedHead.from_pipeline(model, {"task": "t", "head": head})
    saved.save(tmp_path / "head.safetensors")
    again = yardstick.SavedHead.load(tmp_path / "head.safetensors")
    probe = rng.normal(size=(500, 8)).astype(np.float32)
    assert (again.predict(probe) == model.predict(probe)).all() and again.metadata == {"task": "t", "head": head}


def test_the_independent_judge_is_fitted_once_and_read_back_in_later_sessions(tmp_path, monkeypatch):
    editors, yardstick = load("editors"), load("frozen_yardstick")
    rng = np.random.default_rng(0)
    vectors = {}

    def features(store, data, schema):  # a fixed vector per text, as the encoder gives
        return np.stack([vectors.setdefault(t, rng.normal(size=8).astype(np.float32)) for t in data["text"]])

    rows = {"text": [f"text {i}" for i in range(40)], "label": ["positive", "negative"] * 20}
    monkeypatch.setattr(editors, "judge_rows", lambda task, split: Dataset.from_dict(rows))
    monkeypatch.setattr(editors, "JUDGES", tmp_path)
    monkeypatch.setattr(yardstick, "features", features)
    monkeypatch.setattr(yardstick, "EncodingStore", lambda **_: None)
    fits = []
    real_fit = yardstick.train_head
    monkeypatch.setattr(yardstick, "train_head", lambda *a, **k: fits.append(1) or real_fit(*a, **k))
    first = editors.FrozenJudge("sentiment", "lr")
    second = editors.FrozenJudge("sentiment", "lr")
    assert len(fits) == 1 and (tmp_path / "sentiment-lr.safetensors").is_file()
    assert first.predict(rows["text"]) == second.predict(rows["text"]) and first.validity == second.validity
    rows["label"] = rows["label"][::-1]  # other training rows: fitted again
    editors.FrozenJudge("sentiment", "lr")
    assert len(fits) == 2
    # the smoke run checks the judge on a few test rows only, and its description says how many
    few = editors.FrozenJudge("sentiment", "lr", test_rows=10)
    assert len(fits) == 2 and few.description.endswith("(its first 10 rows)")


def test_a_gpu_suite_part_runs_without_a_cross_fitted_row_whose_counterfactuals_were_not_carried(tmp_path,
                                                                                                  monkeypatch):
    """The sentiment full-coverage part is the suite's first: a missing optional row must not cost the whole part."""
    import argparse
    import subprocess

    suite = load("gpu_suite")
    for name in ("sentiment-100", "sentiment-q1"):
        (tmp_path / "carry" / "counterfactuals" / name).mkdir(parents=True)
        (tmp_path / "carry" / "counterfactuals" / name / "dataset_info.json").write_text("{}")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "MANIFEST.md").write_text("data")
    monkeypatch.setattr(suite, "CARRY", tmp_path / "carry")
    monkeypatch.setattr(suite, "_share_rows", lambda *a, **k: 5)
    monkeypatch.setattr(suite, "_device", lambda: "cpu")
    commands = []
    monkeypatch.setattr(subprocess, "run", lambda cmd, **k: commands.append(cmd) or
                        subprocess.CompletedProcess(cmd, 0, "", ""))
    args = argparse.Namespace(out=str(tmp_path / "out"), data=str(tmp_path / "data"), parts=["sentiment, full"],
                              smoke=False, budget_s=900, commit="abc")
    assert suite.run(args) == 0
    [cmd] = commands
    rows = cmd[cmd.index("--rows") + 1:cmd.index("--device-note")]
    assert "crossfit" in rows and "crossfit (halves)" not in rows and rows[0] == "none"
    assert "sentiment_q1=" + str(tmp_path / "carry" / "counterfactuals" / "sentiment-q1") in cmd
    [part] = json.loads((tmp_path / "out" / "gpu_suite.json").read_text())["parts"]
    assert part["status"] == "done" and part["rows"] == rows
    assert all(f"sentiment-{h}" in part["left_out"]["crossfit (halves)"] for h in ("q01", "q23"))


def test_the_editor_benchmark_refuses_a_hand_reading_sample_at_a_candidate_count_it_does_not_measure(monkeypatch,
                                                                                                     capsys):
    editors = load("editors")
    for argv, given in ((["--sample-at", "16"], "none"), (["--candidates", "4", "8", "--sample-at", "4", "16"], "4 8")):
        monkeypatch.setattr("sys.argv", ["editors", "--tasks", "sentiment", *argv])
        with pytest.raises(SystemExit):
            editors.main()
        assert f"each K must be one of --candidates (given: {given})" in capsys.readouterr().err


def test_the_gpu_suite_serves_the_carried_minilm_from_a_hugging_face_cache(tmp_path, monkeypatch):
    """FEVER's flip checker names MiniLM as its base; the offline GPU image had it neither installed nor cached."""
    from huggingface_hub import try_to_load_from_cache

    suite = load("gpu_suite")
    monkeypatch.setattr(suite, "ROOT", tmp_path)
    assert suite.seed_hub_cache(tmp_path / "absent", "org/model") is None
    (tmp_path / "minilm").mkdir()
    (tmp_path / "minilm" / "config.json").write_text("{}")
    cache = suite.seed_hub_cache(tmp_path / "minilm", "org/model")
    assert suite.seed_hub_cache(tmp_path / "minilm", "org/model") == cache  # a second run reuses it
    found = try_to_load_from_cache("org/model", "config.json", cache_dir=cache)
    assert isinstance(found, str) and open(found).read() == "{}"


def test_a_debias_row_cut_in_the_middle_goes_on_from_its_finished_seeds(tmp_path, monkeypatch):
    """A GPU call's time limit cut NLI's `human` row after 4 of its 5 seeds and the row was lost: each finished seed
    is now written at once, and a --merge run of the same table trains only the seeds the cut row still lacks."""

    from datasets import Dataset

    from cfaug_hf import TaskSchema

    run, settings = load("debias.run"), load("debias.settings")
    train = Dataset.from_dict({"id": ["a", "b", "c", "d"], "text": ["good", "bad", "fine", "awful"],
                               "label": ["positive", "negative", "positive", "negative"]})
    monkeypatch.setitem(run.CONFIGS, "tiny", lambda: {"schema": TaskSchema.sentiment(id_column="id"), "train": train,
                                                      "tests": {"dev": train}})
    monkeypatch.setattr(run, "component_files", lambda: {"editor": "sha256:e"})
    monkeypatch.setattr(run, "training_set", lambda config, name, row, seed: config["train"])
    monkeypatch.setattr(settings, "RESULTS", tmp_path)
    trained = []

    def classifier(data, tests, schema, seed):
        if len(trained) == 3:
            raise KeyboardInterrupt("the device call's time limit")
        trained.append(seed)
        return {"dev": 0.5 + seed / 100}

    monkeypatch.setattr(run, "run_bow", classifier)
    args = run.build_parser().parse_args(["--config", "tiny", "--rows", "none", "human", "--seeds", "0", "1",
                                          "--merge"])
    with pytest.raises(KeyboardInterrupt):
        run.run_config("tiny", args)  # none: seeds 0 and 1; human: seed 0, then the cut
    table = json.loads((tmp_path / "debias_tiny_bow.json").read_text())
    assert list(table["rows"]) == ["none"] and table["unfinished"]["human"]["seeds"] == [0]
    trained.clear()
    monkeypatch.setattr(run, "run_bow", lambda data, tests, schema, seed: trained.append(seed) or {"dev": 0.6})
    args.rows = ["human"]
    done = run.run_config("tiny", args)
    assert trained == [1] and done["rows"]["human"]["accuracy"]["dev"] == [0.5, 0.6]
    assert list(done["rows"]) == ["none", "human"] and "unfinished" not in done
    # Other components since the cut: its seeds would mix two editors' rows, so the row starts again
    (tmp_path / "debias_tiny_bow.json").write_text(json.dumps(table))
    monkeypatch.setattr(run, "component_files", lambda: {"editor": "sha256:retrained"})
    trained.clear()
    run.run_config("tiny", args)
    assert trained == [0, 1]


def test_a_merged_table_keeps_the_probes_of_the_none_row_it_keeps(tmp_path, monkeypatch):
    """The probes (e.g. the claim-only model's rows on FEVER) are scores of the `none` model: a --merge run that
    redoes other rows kept `none` but dropped its probes, twice restored by hand from git. They stay with it now,
    and a run that redoes `none` writes its own."""
    import dataclasses

    from datasets import Dataset

    from cfaug_hf import TaskSchema

    run, settings = load("debias.run"), load("debias.settings")
    train = Dataset.from_dict({"id": ["a", "b"], "text": ["good", "bad"], "label": ["positive", "negative"]})
    monkeypatch.setitem(run.CONFIGS, "tiny", lambda: {"schema": TaskSchema.sentiment(id_column="id"), "train": train,
                                                      "tests": {"dev": train}})
    monkeypatch.setitem(run.ROWS, "probed", dataclasses.replace(run.ROWS["human"], name="probed", configs=("tiny",),
                                                                probe=("probe set", lambda data: data)))
    monkeypatch.setattr(run, "component_files", lambda: {"editor": "sha256:e"})
    monkeypatch.setattr(run, "training_set", lambda config, name, row, seed: config["train"])
    monkeypatch.setattr(settings, "RESULTS", tmp_path)
    monkeypatch.setattr(run, "run_bow", lambda data, tests, schema, seed: {t: 0.5 for t in tests})
    args = run.build_parser().parse_args(["--config", "tiny", "--rows", "none", "probed", "--seeds", "0", "--merge"])
    first = run.run_config("tiny", args)
    assert first["probes"] == {"probe set": {"rows": 2, "none_model": [0.5]}}
    args.rows = ["probed"]
    again = run.run_config("tiny", args)
    assert list(again["rows"]) == ["none", "probed"] and again["probes"] == first["probes"]
    assert json.loads((tmp_path / "debias_tiny_bow.json").read_text())["probes"] == first["probes"]
    monkeypatch.setattr(run, "run_bow", lambda data, tests, schema, seed: {t: 0.7 for t in tests})
    args.rows = ["none", "probed"]
    assert run.run_config("tiny", args)["probes"]["probe set"]["none_model"] == [0.7]


def test_a_gpu_suite_part_resumes_the_table_an_earlier_device_call_wrote(tmp_path, monkeypatch):
    """Device time comes in 15-minute loans: a part goes on from the committed table of the last call (its finished
    rows kept, not run again) instead of starting from `none`."""
    suite = load("gpu_suite")
    earlier = tmp_path / "h200-earlier" / "nli-100"
    earlier.mkdir(parents=True)
    five = {"dev": [0.5] * 5}
    (earlier / "debias_nli_minilm.json").write_text(json.dumps({
        "seeds": [0, 1, 2, 3, 4], "rows": {"none": {"accuracy": five}, "editor+checker": {"accuracy": five}},
        "unfinished": {"human": {"seeds": [0, 1, 2, 3]}}}))
    entry: dict = {}
    rows = suite.resumed_part(tmp_path / "h200-earlier", tmp_path / "out" / "nli-100",
                              ["none", "editor+checker", "human", "amplify"], entry)
    assert rows == ["human", "amplify"] and entry["resumed"]["kept"] == ["editor+checker", "none"]
    assert (tmp_path / "out" / "nli-100" / "debias_nli_minilm.json").is_file()  # what --merge reads
    assert suite.resumed_part(tmp_path / "nothing", tmp_path / "out2" / "nli-100", ["none"], {}) == ["none"]


def test_gpu_suite_carries_the_every_target_and_premise_counterfactuals_its_rows_read(tmp_path, monkeypatch):
    suite = load("gpu_suite")
    from benchmarks.debias.rows.editor_all_targets import ADDITIONS
    from benchmarks.debias.rows.editor_premises import PREMISE_SETS, premise_reuse_key

    wanted = {q for p in suite.PARTS for r in p[2] for q in suite.ALL_TARGETS.get(r, [])}
    assert wanted == {(0,), (1,)} and set(suite.ALL_TARGETS) <= {r for p in suite.PARTS for r in p[2]}
    assert set(suite.PREMISES) <= {r for p in suite.PARTS for r in p[2]}
    assert all(ADDITIONS[r] for r in suite.ALL_TARGETS if r in ADDITIONS)  # the carried rows have the additions
    rows = next(p[2] for p in suite.PARTS if p[1] == "nli")
    sets = suite.editor_sets("nli", rows)
    assert {k: v[0] for k, v in sets.items()} == {"nli_all": (0,), "nli_all_q1": (1,), "nli_premise": (0,),
                                                  "nli_premise_q1": (1,), "nli_premise_x2": (0,)}
    # every key is one that --editor-data accepts
    assert {k for k in sets if "premise" in k} == {premise_reuse_key("nli", q, n) for q, n in PREMISE_SETS}
    monkeypatch.setattr(suite, "CARRY", tmp_path)
    for key, folder in (("nli_all", "nli-all"), ("nli_all_q1", "nli-all-q1"), ("nli_premise_x2", "nli-premise-x2")):
        assert suite.set_folder(key, sets[key][0], None, False, sets[key][1]) == tmp_path / "counterfactuals" / folder
    assert suite.editor_sets("nli", ["crossfit (premises)"]).keys() == {"nli_premise", "nli_premise_q1"}


def test_gpu_suite_carries_the_reviews_edited_until_they_flip(tmp_path, monkeypatch):
    """Issue 62 asks the suite to keep up with the whole-input editor: the sentiment part runs ``editor (until
    flipped)`` from a carried set, under a key ``--editor-data`` accepts."""
    suite = load("gpu_suite")
    from benchmarks.debias.registry import REUSE_KEYS

    rows = next(p[2] for p in suite.PARTS if p[1] == "sentiment")
    assert set(suite.UNTIL_FLIPPED) <= set(rows)
    sets = suite.editor_sets("sentiment", rows)
    assert {k: v[0] for k, v in sets.items()} == {"sentiment_until_flipped": (0,)}
    assert "sentiment_until_flipped" in REUSE_KEYS
    monkeypatch.setattr(suite, "CARRY", tmp_path)
    key = "sentiment_until_flipped"
    folder = suite.set_folder(key, (0,), None, False, sets[key][1])
    assert folder == tmp_path / "counterfactuals" / "sentiment-until-flipped"


def test_the_until_flipped_row_reads_given_counterfactuals_and_refuses_other_rows(tmp_path, monkeypatch):
    """On the GPU (no SmolLM2) ``editor (until flipped)`` reads what the loop wrote here
    (``--editor-data sentiment_until_flipped=``), joined to the training rows; a set of other rows is refused."""
    load("debias")
    from datasets import Dataset

    from benchmarks.debias import settings
    from benchmarks.debias.rows import until_flipped as rows

    train = Dataset.from_dict({"id": ["a", "b"], "text": ["Bad film.", "Good film."],
                               "label": ["negative", "positive"]})
    monkeypatch.setattr(rows, "written_by", lambda train, task, quarters: (train, True))
    cfs = Dataset.from_dict({"id": ["a"], "text": ["Fine film."], "label": ["positive"], "cf_source_id": ["a"],
                             "cf_is_counterfactual": [True], "cf_method": ["core"], "cf_kind": ["llm-edit"],
                             "cf_original_label": ["negative"], "cf_edit": [None], "cf_change": ["Bad -> Fine"],
                             "cf_outcome": ["counterfactual"]})
    cfs.save_to_disk(tmp_path / "until")
    monkeypatch.setitem(settings.REUSE, "sentiment_until_flipped", str(tmp_path / "until"))
    got = rows.until_flipped_rows(train, 0, task="sentiment")
    assert got["text"] == ["Bad film.", "Good film.", "Fine film."]
    assert settings.NOTES["editor (until flipped)"]["components"] == {"reused": "until"}
    monkeypatch.setattr(rows, "written_by", lambda train, task, quarters: (train.select([1]), True))
    with pytest.raises(SystemExit, match="does not hold counterfactuals of this run's 1 rows"):
        rows.until_flipped_rows(train, 0, task="sentiment")


def test_the_every_target_rows_read_given_counterfactuals_and_refuse_other_rows(tmp_path, monkeypatch):
    """On the GPU (no SmolLM2) the every-target rows read what the editors wrote here (``--editor-data nli_all=``)."""
    load("debias")
    from datasets import Dataset

    from benchmarks.debias import settings
    from benchmarks.debias.rows import editor_all_targets as rows

    subset = Dataset.from_dict({"id": ["a", "b"], "premise": ["p", "q"], "hypothesis": ["h", "i"],
                                "label": ["entailment", "neutral"]})
    monkeypatch.setattr(rows, "written_by", lambda train, task, quarters: (subset, True))
    cfs = Dataset.from_dict({"id": ["a"], "premise": ["p"], "hypothesis": ["A tired h"], "label": ["neutral"],
                             "cf_source_id": ["a"]})
    cfs.save_to_disk(tmp_path / "nli-all")
    monkeypatch.setitem(settings.REUSE, "nli_all", str(tmp_path / "nli-all"))
    got, components = rows.all_target_rows(subset, "nli", "editor+checker (all targets)")
    assert got["hypothesis"] == ["A tired h"] and components == {"reused": "nli-all"}
    with pytest.raises(SystemExit, match="does not hold counterfactuals of this run's 1 rows"):
        monkeypatch.setattr(rows, "written_by", lambda train, task, quarters: (subset.select([1]), True))
        rows.all_target_rows(subset, "nli", "editor+checker (all targets)")


def test_the_premise_rows_read_given_counterfactuals_and_filter_them_by_their_recorded_scores(tmp_path, monkeypatch):
    """On the GPU the premise rows read what the premise editors wrote here (``--editor-data nli_premise_x2=``);
    a threshold still filters by each row's recorded label-flip score."""
    load("debias")
    import json

    from datasets import Dataset

    from benchmarks.debias import settings
    from benchmarks.debias.rows import editor_premises as rows
    from cfaug_hf.augmenter import PROVENANCE_COLUMNS

    subset = Dataset.from_dict({"id": ["a", "b"], "premise": ["p", "q"], "hypothesis": ["h", "i"],
                                "label": ["entailment", "neutral"]})
    monkeypatch.setattr(rows, "written_by", lambda train, task, quarters: (subset, True))
    monkeypatch.setattr(rows, "premise_augmenter", lambda *a, **k: pytest.fail("the editor was loaded"))
    provenance = {c: ["x", "y"] for c in PROVENANCE_COLUMNS}
    provenance.update(cf_source_id=["a", "b"], cf_edit=[json.dumps({"filter_scores": {"label_flip": s}})
                                                        for s in (0.9, 0.4)])
    Dataset.from_dict({"id": ["a-p0", "b-p0"], "premise": ["P1", "P2"], "hypothesis": ["h", "i"],
                       "label": ["neutral", "contradiction"], **provenance}).save_to_disk(tmp_path / "x2")
    monkeypatch.setitem(settings.REUSE, "nli_premise_x2", str(tmp_path / "x2"))
    got = rows.premise_counterfactuals(subset, "nli", 0.65, per_target=2)
    assert got["premise"] == ["P1"] and set(got.column_names) == set(subset.column_names)
    assert settings.NOTES.pop("premise editor")["components"] == {"reused": "x2"}
    monkeypatch.setattr(rows, "written_by", lambda train, task, quarters: (subset.select([1]), True))
    with pytest.raises(SystemExit, match="does not hold counterfactuals of this run's 1 rows"):
        rows.premise_rows(subset, "nli", per_target=2)


def test_a_gpu_suite_smoke_run_writes_its_tables_outside_the_committed_results(monkeypatch):
    """A smoke run once wrote its one-seed CPU tables into benchmarks/results/gpu (``--out`` was a string, which the
    harness does not redirect): a smoke run's tables go to the harness's temporary folder; a device run's to --out."""
    from benchmarks import harness

    suite = load("gpu_suite")
    monkeypatch.setattr(harness, "SMOKE_OUT", None)
    monkeypatch.delenv("OUT", raising=False)
    device = suite.build_parser().parse_args(["run"])
    assert device.out == Path("benchmarks/results/gpu") and harness.SMOKE_OUT is None
    smoke = suite.build_parser().parse_args(["run", "--smoke", "--parts", "nli"])
    assert smoke.out == harness.SMOKE_OUT and harness.RESULTS not in smoke.out.parents
    assert suite.build_parser().parse_args(["run", "--out", "/tmp/x"]).out == Path("/tmp/x")


def test_the_human_premise_row_pairs_each_row_with_its_own_revised_premises(monkeypatch):
    """The premise editor's reference: CAD's revised premises of exactly the rows the editor rewrites, each with
    the row's hypothesis kept and the target label; a row CAD did not revise adds nothing."""
    from datasets import Dataset

    import scripts.shared_data as shared

    premises = load("debias.rows.editor_premises")
    revised = Dataset.from_dict({"hypothesis": ["A man moves.", "A man moves."], "text": ["A man runs."] * 2,
                                 "counterfactual": ["A man sits.", "A man runs fast."],
                                 "label": ["entailment"] * 2, "target": ["contradiction", "neutral"],
                                 "original": [0, 0]})
    monkeypatch.setattr(shared, "cad_nli_edit_rows", lambda split, side="hypothesis": revised)
    train = Dataset.from_dict({"id": ["r0", "r1"], "premise": ["A man runs.", "Two dogs play."],
                               "hypothesis": ["A man moves.", "Dogs play."], "label": ["entailment", "entailment"]})
    out = premises.human_premises(train, train)
    assert out.to_list() == [
        {"id": "r0-premise0", "premise": "A man sits.", "hypothesis": "A man moves.", "label": "contradiction"},
        {"id": "r0-premise1", "premise": "A man runs fast.", "hypothesis": "A man moves.", "label": "neutral"}]
    rows = load("debias.registry").ROWS
    assert rows["editor+checker (premises)"].same_rows == "human (editor rows, premises)"


def test_the_strict_premise_threshold_is_the_lowest_step_rejecting_unchanged_dev_premises(monkeypatch):
    """The strict premise rows' threshold comes from CAD-SNLI dev alone: the lowest 0.05 step at which the checker
    rejects 95% of original pairs given a revised premise's label, with what it keeps of the human premises."""
    import numpy as np
    from datasets import Dataset

    import cfaug_hf.components.checker as checkers
    import scripts.shared_data as shared

    premises = load("debias.rows.editor_premises")
    names = ("entailment", "neutral", "contradiction")

    class Checker:
        label_names = names

        class config:
            accept_threshold = 0.3

        def label_id(self, label):
            return names.index(label)

        def predict_proba(self, first, second):
            return np.array([[0.1, 0.1, 0.8] if "sits" in p else [0.5, 0.3, 0.2] for p in first])

    originals = Dataset.from_dict({"premise": [f"A man {i} runs." for i in range(10)],
                                   "hypothesis": [f"Man {i} moves." for i in range(10)], "label": ["entailment"] * 10})
    revised = Dataset.from_dict({"premise": [f"A man {i // 2} {'sits' if i % 2 else 'naps'}." for i in range(20)],
                                 "hypothesis": [f"Man {i // 2} moves." for i in range(20)],
                                 "label": ["neutral", "contradiction"] * 10})
    monkeypatch.setattr(shared, "cad_nli", lambda part, split: {"original": originals,
                                                                "revised_premise": revised}[part])
    monkeypatch.setattr(checkers, "default_checker", lambda task: Checker())
    premises.premise_calibration.cache_clear()
    try:
        got = premises.premise_calibration()
    finally:
        premises.premise_calibration.cache_clear()
    # unchanged pairs give neutral 0.3 and contradiction 0.2: 0.35 is the first step above both
    assert got["threshold"] == 0.35 and got["rejected_unchanged"] == 1.0 and got["kept_human"] == 0.5
    # at 0.3 the naps premise (neutral 0.3) is kept too, and so is the unchanged pair given neutral
    assert got["at_shipped_threshold"] == {"threshold": 0.3, "rejected_unchanged": 0.5, "kept_human": 1.0}
