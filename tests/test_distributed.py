"""Ray Data scale-out on a local Ray instance: the same rows, order, provenance and statistics as a local
``augment``, whatever the number of actors and the batch size; a failing batch is reported with its rows."""

import pytest
from datasets import Dataset, load_dataset

ray = pytest.importorskip("ray")

from cfaug_hf import Augmenter, TaskSchema  # noqa: E402
from cfaug_hf.augmenter import AugmentationError  # noqa: E402
from cfaug_hf.distributed import augment_ray, augment_to_parquet  # noqa: E402
from cfaug_hf.testing import NegateAugmenter  # noqa: E402


RAY_KEY = "sk-user-0123456789abcdefABCDEF"


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    import os

    # A key the actors can read: they run in the environment the cluster started with, as keys always are read
    # where the request is made (never carried in a config).
    os.environ["CFAUG_RAY_TEST_KEY"] = RAY_KEY
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def negate_case(keep_original=True):
    texts = [f"the film {i} was good" if i % 3 else f"a film {i}" for i in range(23)]
    data = Dataset.from_dict({"id": [f"n{i}" for i in range(23)], "text": texts,
                              "label": ["positive", "negative"] * 11 + ["positive"]})
    return NegateAugmenter(TaskSchema.sentiment(id_column="id"), keep_original=keep_original), data


def read(folder):
    return load_dataset("parquet", data_dir=str(folder), split="train").to_list()


def test_ray_writes_the_rows_and_stats_of_a_local_augment(tmp_path):
    # A local augment's output does not depend on its batch size (the contract suite); Ray's must equal it whatever
    # the actor and batch a row lands in, with the exact statistics (skipped rows included: originals are dropped).
    aug, data = negate_case(keep_original=False)
    expected = aug.augment(data).to_list()
    local_stats = aug.stats.to_dict()
    assert local_stats.get("skipped")  # the case has rows without a counterfactual
    folder = aug.save_pretrained(tmp_path / "augmenter", copy_components=True)
    data.to_parquet(tmp_path / "in.parquet")
    stats = augment_to_parquet(str(tmp_path / "in.parquet"), str(folder), tmp_path / "out", concurrency=2,
                               batch_size=4, imports=["cfaug_hf.testing"])
    assert read(tmp_path / "out") == expected
    assert stats.to_dict() == local_stats and stats.rows_in == len(data)


def test_no_output_row_still_writes_a_readable_parquet_folder(tmp_path):
    aug, data = negate_case(keep_original=False)
    none = data.filter(lambda t: " was " not in t, input_columns="text")  # nothing to negate
    stats = augment_to_parquet(none, aug, tmp_path / "out", batch_size=8)
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "out")  # datasets cannot load a Parquet file of no rows; pyarrow can
    assert table.num_rows == 0 and "cf_outcome" in table.column_names
    assert stats.rows_in == len(none) and stats.skipped == {"no_verb": len(none)}


def test_a_batch_that_keeps_failing_is_reported_with_its_rows(tmp_path):
    aug, data = negate_case()
    bad = Dataset.from_dict({"id": ["bad-row"], "text": [None], "label": ["positive"]}).cast(data.features)
    from datasets import concatenate_datasets

    folder = aug.save_pretrained(tmp_path / "augmenter")
    with pytest.raises(AugmentationError, match="bad-row"):
        augment_to_parquet(concatenate_datasets([data, bad]), str(folder), tmp_path / "out", batch_size=4,
                           max_retries=1, imports=["cfaug_hf.testing"])


def test_bad_arguments_fail_before_any_work(tmp_path):
    aug, data = negate_case()
    with pytest.raises(ValueError, match="concurrency must be a positive integer"):
        augment_ray(data, aug, concurrency=0)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        augment_ray(data, aug, batch_size=0)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        augment_ray(str(tmp_path / "missing.parquet"), aug)
    with pytest.raises(TypeError, match="augment_ray takes"):
        augment_ray([{"text": "a"}], aug)
    assert isinstance(Augmenter.from_pretrained(aug.save_pretrained(tmp_path / "a")), NegateAugmenter)


def test_cli_augment_runs_a_saved_augmenter_here_and_on_ray(tmp_path, capsys):
    import json

    from datasets import load_from_disk

    from cfaug_hf.cli import main

    aug, data = negate_case()
    aug.save_pretrained(tmp_path / "augmenter")
    data.to_json(tmp_path / "in.jsonl")
    main(["augment", str(tmp_path / "in.jsonl"), "--augmenter", str(tmp_path / "augmenter"), "--out",
          str(tmp_path / "local")])
    local = load_from_disk(str(tmp_path / "local" / "data")).to_list()
    main(["augment", str(tmp_path / "in.jsonl"), "--augmenter", str(tmp_path / "augmenter"), "--out",
          str(tmp_path / "ray"), "--runner", "ray", "--concurrency", "2", "--batch-size", "6",
          "--imports", "cfaug_hf.testing"])
    assert read(tmp_path / "ray" / "data") == local == aug.augment(data).to_list()
    assert json.loads((tmp_path / "ray" / "stats.json").read_text()) == aug.stats.to_dict()
    assert "Saved Parquet files" in capsys.readouterr().out


def test_a_rerun_with_overwrite_replaces_every_part_of_the_run_before(tmp_path, capsys):
    """Reported: `cfaug augment --runner ray ... --overwrite` into the same --out added new Parquet parts beside the
    old ones (22 rows read back, stats.json said 11). The run is written to a fresh folder and swapped in."""
    import json

    from cfaug_hf.cli import main

    aug, data = negate_case()
    aug.save_pretrained(tmp_path / "augmenter")
    data.to_json(tmp_path / "in.jsonl")
    data.select(range(5)).to_json(tmp_path / "small.jsonl")
    args = ["--augmenter", str(tmp_path / "augmenter"), "--out", str(tmp_path / "ray"), "--runner", "ray",
            "--concurrency", "2", "--batch-size", "2", "--imports", "cfaug_hf.testing"]
    assert main(["augment", str(tmp_path / "in.jsonl"), *args]) == 0
    (tmp_path / "ray" / "my-notes.txt").write_text("mine")
    assert main(["augment", str(tmp_path / "small.jsonl"), *args, "--overwrite"]) == 0
    stats = json.loads((tmp_path / "ray" / "stats.json").read_text())
    assert len(read(tmp_path / "ray" / "data")) == stats["rows_out"] and stats["rows_in"] == 5
    assert (tmp_path / "ray" / "my-notes.txt").read_text() == "mine"
    # the Parquet API itself: a second write of the same folder replaces the first one's parts
    augment_to_parquet(data, str(tmp_path / "augmenter"), tmp_path / "direct", batch_size=2, concurrency=2,
                       imports=["cfaug_hf.testing"])
    stats = augment_to_parquet(data.select(range(3)), str(tmp_path / "augmenter"), tmp_path / "direct",
                               batch_size=2, imports=["cfaug_hf.testing"])
    assert len(read(tmp_path / "direct")) == stats.rows_out


def test_the_users_own_endpoint_reaches_ray_actors_with_the_users_key(tmp_path, monkeypatch, capsys):
    """``--llm URL --llm-api-key-env VAR --runner ray``: each actor loads the saved augmenter, whose endpoint config
    is data there; the command hands the actors the address and its key variable (a loaded file's own choice of
    variable would be refused)."""
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from llm_server import LLMServer

    from cfaug_hf.cli import main

    server = LLMServer()
    server.responder = lambda prompt, body: '"The room was clean."'
    try:
        Dataset.from_dict({"text": ["The room was dirty."], "label": ["negative"]}).to_json(tmp_path / "in.jsonl")
        assert main(["augment", str(tmp_path / "in.jsonl"), "--method", "llm", "--llm", server.url, "--llm-model",
                     "m", "--llm-api-key-env", "CFAUG_RAY_TEST_KEY", "--checker", "none", "--runner", "ray",
                     "--concurrency", "1", "--out", str(tmp_path / "ray")]) == 0, capsys.readouterr().err
        assert server.requests and all(r["authorization"] == f"Bearer {RAY_KEY}" for r in server.requests)
    finally:
        server.close()
