"""Property and fault-injection tests for the hardening classes: nothing lost, nothing leaked, nothing miscounted.

Each test names the class of defect it guards (issue "Nothing lost, nothing leaked, nothing miscounted"):

1. data loss (folders the library did not write), 2. secrets, 3. one bad answer aborting a dataset, 4. counts that
depend on row order or unique ids, 5. component paths outside their folder, 6. cards taking user text raw,
7. callbacks failing late, 8. damaged saved files, 9. LLM answers that are echoes or far too long.
"""

from __future__ import annotations

import json
import logging
import os
import time

import httpx2
import openai
import pytest
from datasets import Dataset, Features, Value
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cfaug_hf import AugmentationStats, Augmenter, LabelChecker, OpenAICompatibleLLM, TaskSchema
from cfaug_hf.augmenter import AugmentationError
from cfaug_hf.sharing.folders import ComponentLoadError, FolderNotEmptyError, save_dataset, write_folder
from cfaug_hf.testing import NegateAugmenter, tiny_classifier

from fault_server import FAULTS, FaultServer

SENT = TaskSchema.sentiment()
KEY = "sk-live-SECRET0123456789abcdef"
PROPERTY = settings(max_examples=int(os.environ.get("CFAUG_PROPERTY_EXAMPLES", 25)), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# ------------------------------------------------------------------------------------------- 4. row accounting
texts = st.sampled_from(["the film was good", "it is bad", "a film", "the plot was thin", "ünïcode was 😀",
                         "it were fine", "", "   "])
rows = st.lists(st.tuples(texts, st.sampled_from(["positive", "negative"]), st.sampled_from(["a", "b", "c", "d"])),
                min_size=1, max_size=30)


def _dataset(data, with_ids):
    columns = {"text": [t for t, _, _ in data], "label": [lab for _, lab, _ in data]}
    if with_ids:
        columns["id"] = [i for _, _, i in data]  # few distinct values: duplicate ids on purpose
    return Dataset.from_dict(columns)


def _rowset(ds):
    return sorted(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in ds)


@PROPERTY
@given(data=rows, with_ids=st.booleans(), keep=st.booleans(), batch=st.integers(1, 7), seed=st.integers(0, 9))
def test_row_accounting_is_exact_and_independent_of_order_batch_size_and_ids(data, with_ids, keep, batch, seed):
    schema = TaskSchema.sentiment(id_column="id" if with_ids else None)
    ds = _dataset(data, with_ids)
    aug = NegateAugmenter(schema, keep_original=keep)
    blank = [i for i, (t, _, _) in enumerate(data) if not t.strip()]
    if blank:  # bad input fails before anything is written, naming the column and the first bad row
        from cfaug_hf import SchemaError

        with pytest.raises(SchemaError, match=f"Column 'text' at row {blank[0]}"):
            aug.augment(ds, batch_size=batch, load_from_cache_file=False)
        return
    out = aug.augment(ds, batch_size=batch, load_from_cache_file=False)
    stats = aug.stats
    assert stats.rows_in == len(ds) and stats.rows_out == len(out)
    assert stats.counterfactuals == sum(out["cf_is_counterfactual"])
    assert sum(stats.events.values()) >= len(ds)  # every row left at least one produced/skipped event
    recovered = AugmentationStats.from_dataset(out.shuffle(seed=seed), rows_in=len(ds))
    assert recovered.rows_in == stats.rows_in and recovered.counterfactuals == stats.counterfactuals
    if keep:  # originals are kept: the output alone, in any order, gives the exact counts and reasons
        assert recovered.to_dict() == stats.to_dict()
    again = NegateAugmenter(schema, keep_original=keep).augment(ds.shuffle(seed=seed), batch_size=batch + 3,
                                                                load_from_cache_file=False)
    assert _rowset(again) == _rowset(out)  # the same rows whatever the input order and batch size


def test_num_proc_gives_the_same_rows_and_counts():
    ds = _dataset([("the film was good", "positive", "a"), ("it is bad", "negative", "a"), ("a film", "positive", "b")]
                  * 10, with_ids=True)
    one = NegateAugmenter(SENT).augment(ds, batch_size=4, load_from_cache_file=False)
    aug = NegateAugmenter(SENT)
    two = aug.augment(ds, batch_size=4, num_proc=2, load_from_cache_file=False)
    assert _rowset(one) == _rowset(two) and aug.stats.rows_in == 30


def test_a_missing_id_column_is_an_error_not_ignored():
    from cfaug_hf import SchemaError

    with pytest.raises(SchemaError, match="Column 'uid' \\(id_column\\) is missing"):
        NegateAugmenter(TaskSchema.sentiment(id_column="uid")).augment(_dataset([("a film", "positive", "a")], False))
    with pytest.raises(SchemaError, match="'uid' \\(the schema's id_column\\) is missing"):
        _dataset([("a film", "positive", "a")], False).map(NegateAugmenter(TaskSchema.sentiment(id_column="uid")),
                                                           batched=True)


@PROPERTY
@given(docs=st.lists(st.sampled_from(["Great stay. Rude staff.", "Lovely room. Dirty floor.", "Fine. Noisy night.",
                                      "Clean bath. Bad food."]), min_size=4, max_size=12))
def test_rationale_swaps_with_duplicate_documents_emit_each_row_once(docs):
    from cfaug_hf.methods.icda import RationaleSwapAugmenter
    from cfaug_hf.methods.icda.selection import SelectionResult

    class FirstSentence:  # a selector that picks sentence 0 with full confidence
        def select(self, documents, labels=None):
            return SelectionResult([0] * len(documents), [1.0] * len(documents), [int(lab) for lab in labels])

    labels = ["positive" if i % 2 else "negative" for i in range(len(docs))]
    ds = Dataset.from_dict({"text": docs, "label": labels})
    aug = RationaleSwapAugmenter(FirstSentence(), SENT, seed=1)
    out = aug.augment(ds, load_from_cache_file=False)
    assert aug.stats.rows_in == len(ds) and aug.stats.rows_out == len(out)
    assert aug.stats.counterfactuals == sum(out["cf_is_counterfactual"])
    per_source = {}
    for row in out.filter(lambda cf: cf, input_columns="cf_is_counterfactual"):
        per_source[row["cf_source_id"]] = per_source.get(row["cf_source_id"], 0) + 1
    sources = {}
    for row in out.filter(lambda cf: not cf, input_columns="cf_is_counterfactual"):
        sources[row["cf_source_id"]] = sources.get(row["cf_source_id"], 0) + 1
    assert all(n <= sources[sid] for sid, n in per_source.items())  # no row emits another's counterfactuals


def test_the_report_pairs_a_counterfactual_with_its_own_source_when_ids_repeat():
    from cfaug_hf.report import counterfactual_pairs

    schema = TaskSchema.sentiment(id_column="id")
    ds = Dataset.from_dict({"text": ["the film was good", "the plot is dull"], "label": ["positive", "negative"],
                            "id": ["same", "same"]})
    out = NegateAugmenter(schema).augment(ds)
    pairs = counterfactual_pairs(ds, out, schema)
    assert len(pairs) == 2
    for p in pairs:
        assert p["source"]["label"] == p["counterfactual"]["cf_original_label"]
        assert p["counterfactual"]["text"].replace(" not", "") == p["source"]["text"]


# --------------------------------------------------------------------------------------------- 1. data loss
def _tree(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_manifest_that_lists_a_users_file_never_deletes_it(tmp_path):
    target = tmp_path / "saved"
    with write_folder(target, "widget") as tmp:
        (tmp / "a.txt").write_text("v1")
        (tmp / "old.txt").write_text("ours")
    (target / "old.txt").write_text("the user rewrote this file")  # listed in the manifest, but no longer ours
    manifest = json.loads((target / "cfaug_manifest.json").read_text())
    manifest["files"].append("notes.txt")  # a hand-edited manifest naming a user's file
    (target / "cfaug_manifest.json").write_text(json.dumps(manifest))
    (target / "notes.txt").write_text("mine")
    with pytest.raises(FolderNotEmptyError, match="old.txt.*changed since the library wrote them"):
        with write_folder(target, "widget") as tmp:
            (tmp / "a.txt").write_text("v2")
    with write_folder(target, "widget", overwrite=True) as tmp:
        (tmp / "a.txt").write_text("v2")
    assert (target / "notes.txt").read_text() == "mine"
    assert (target / "old.txt").read_text() == "the user rewrote this file"
    assert (target / "a.txt").read_text() == "v2"


def test_stale_files_the_library_wrote_are_removed_and_nothing_else(tmp_path):
    target = tmp_path / "saved"
    with write_folder(target, "widget") as tmp:
        (tmp / "shard-0.bin").write_text("0")
        (tmp / "shard-1.bin").write_text("1")
    (target / "mine.txt").write_text("mine")
    with write_folder(target, "widget") as tmp:
        (tmp / "shard-0.bin").write_text("new")
    assert sorted(_tree(target)) == ["cfaug_manifest.json", "mine.txt", "shard-0.bin"]
    assert (target / "shard-0.bin").read_text() == "new" and (target / "mine.txt").read_text() == "mine"


def test_a_symlinked_folder_stays_a_symlink(tmp_path):
    real = tmp_path / "real"
    with write_folder(real, "widget") as tmp:
        (tmp / "a.txt").write_text("v1")
    link = tmp_path / "link"
    link.symlink_to(real)
    with write_folder(link, "widget") as tmp:
        (tmp / "a.txt").write_text("v2")
    assert link.is_symlink() and (real / "a.txt").read_text() == "v2"


def test_a_dataset_saved_by_other_code_is_never_replaced(tmp_path):
    from cfaug_hf import cli

    theirs = tmp_path / "theirs"
    Dataset.from_dict({"x": [1, 2]}).save_to_disk(theirs)
    before = _tree(theirs)
    with pytest.raises(FolderNotEmptyError, match="files the library did not write"):
        save_dataset(Dataset.from_dict({"x": [3]}), theirs)
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"claim": "a b", "evidence": "a b c", "label": "SUPPORTS"}) + "\n")
    assert cli.main(["augment", str(data), "--method", "crossaug", "--generator", "g", "--out", str(theirs)]) == 2
    assert _tree(theirs) == before
    ours = tmp_path / "ours"
    save_dataset(Dataset.from_dict({"x": [1]}), ours)
    save_dataset(Dataset.from_dict({"x": [5, 6]}), ours)  # a folder the library wrote is replaced
    from datasets import load_from_disk

    assert load_from_disk(str(ours))["x"] == [5, 6]


_BUILDS = {
    "from_dict": lambda rows: Dataset.from_dict({"x": rows, "y": [len(r) for r in rows]},
                                                features=Features({"x": Value("string"), "y": Value("int64")})),
    "map dropping rows": lambda rows: Dataset.from_dict({"x": ["a"] + rows, "y": [0] * (len(rows) + 1)}).map(
        lambda b: {"x": b["x"][1:], "y": [len(r) for r in b["x"][1:]]}, batched=True, batch_size=None),
    "filter": lambda rows: Dataset.from_dict({"x": ["a"] + rows, "y": [-1] + [len(r) for r in rows]}).filter(
        lambda y: y >= 0, input_columns="y"),
    "select": lambda rows: Dataset.from_dict({"x": ["a"] + rows, "y": [-1] + [len(r) for r in rows]}).select(
        list(range(1, len(rows) + 1))),
}


@PROPERTY
@given(rows=st.lists(st.text(max_size=5), max_size=3), build=st.sampled_from(sorted(_BUILDS)),
       as_dict=st.booleans())
def test_a_saved_dataset_loads_back_whatever_its_rows(tmp_path_factory, rows, build, as_dict):
    """Every way a dataset can end up with no rows (a batched map or a filter that drops them all, a select of
    none, a dataset built empty) saves to a folder ``load_from_disk`` reads back, with its columns and types:
    ``datasets`` alone writes no data file when the underlying table is empty, and the folder then fails to load."""
    from datasets import DatasetDict, load_from_disk

    data = _BUILDS[build](rows)
    if as_dict:
        data = DatasetDict({"train": data, "test": _BUILDS["from_dict"]([])})
    folder = tmp_path_factory.mktemp("saved") / "data"
    save_dataset(data, folder)
    back = load_from_disk(str(folder))
    if as_dict:
        assert len(back["test"]) == 0 and back["test"].features == data["test"].features
        back, data = back["train"], data["train"]
    assert back.features == data.features
    assert back.to_dict() == data.to_dict() == {"x": rows, "y": [len(r) for r in rows]}


def test_nothing_is_written_when_a_save_fails(tmp_path):
    target = tmp_path / "saved"
    with write_folder(target, "widget") as tmp:
        (tmp / "a.txt").write_text("v1")
    before = _tree(target)
    with pytest.raises(RuntimeError, match="disk full"):
        with write_folder(target, "widget") as tmp:
            (tmp / "a.txt").write_text("v2")
            raise RuntimeError("disk full")
    assert _tree(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["saved"]  # no temporary folder left behind


# ----------------------------------------------------------------------------- 5 and 8. saved folders as data
def _saved_augmenter(tmp_path):
    from cfaug_hf.filters import LabelFlipFilter

    folder = tmp_path / "aug"
    checker = LabelChecker(*tiny_classifier(("negative", "positive")))
    NegateAugmenter(SENT, filters=[LabelFlipFilter(checker)]).save_pretrained(folder)
    return folder


def _edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


DAMAGES = {
    "traversal-component-path": lambda f: _edit_json(f / "cfaug_augmenter.json", lambda d: d["filters"][0]["args"]
                                                     .__setitem__("checker", {"$component": {"type": "checker",
                                                                                             "path": "../../x"}})),
    "absolute-component-path": lambda f: _edit_json(f / "cfaug_augmenter.json", lambda d: d["filters"][0]["args"]
                                                    .__setitem__("checker", {"$component": {"type": "checker",
                                                                                            "path": "/etc"}})),
    "traversal-manifest-entry": lambda f: _edit_json(f / "cfaug_manifest.json", lambda d: d["files"].append("../x")),
    "config-wrong-type": lambda f: _edit_json(f / "cfaug_augmenter.json", lambda d: d["config"].__setitem__(
        "seed", "zero")),
    "config-unknown-field": lambda f: _edit_json(f / "cfaug_augmenter.json", lambda d: d["config"].__setitem__(
        "sed", 1)),
    "config-not-object": lambda f: _edit_json(f / "cfaug_augmenter.json", lambda d: d.__setitem__("config", [])),
    "schema-missing": lambda f: _edit_json(f / "cfaug_augmenter.json", lambda d: d.pop("schema")),
    "filters-not-list": lambda f: _edit_json(f / "cfaug_augmenter.json", lambda d: d.__setitem__("filters", "x")),
    "filter-unknown": lambda f: _edit_json(f / "cfaug_augmenter.json", lambda d: d["filters"][0].__setitem__(
        "filter", "nope")),
    "checker-config-invalid-json": lambda f: (f / "filters/0-label_flip/checker/config.json").write_text("{oops"),
    "checker-tokenizer-invalid-json": lambda f: (f / "filters/0-label_flip/checker/tokenizer.json").write_text("["),
    "checker-field-wrong-type": lambda f: _edit_json(f / "filters/0-label_flip/checker/cfaug_checker.json",
                                                     lambda d: d.__setitem__("checker", {"max_length": "long"})),
    "augmenter-json-invalid": lambda f: (f / "cfaug_augmenter.json").write_text('{"component_type": '),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_or_hostile_saved_augmenter_fails_naming_file_and_field(damage, tmp_path):
    folder = _saved_augmenter(tmp_path)
    assert Augmenter.from_pretrained(folder).filters  # loads whole before the damage
    DAMAGES[damage](folder)
    with pytest.raises(ComponentLoadError) as info:
        Augmenter.from_pretrained(folder)
    message = str(info.value)
    assert str(folder) in message or "from_pretrained" in message
    assert "looks like a bug" not in message


# ------------------------------------------------------------------------------- 2 and 3. the HTTP LLM client
@pytest.fixture(scope="module")
def faults():
    # A drip far longer than any deadline here: a client that waits for it takes a minute, one cut off by its
    # deadline a second or two, so the bounds below hold on a slow or busy machine too.
    server = FaultServer(drip_s=60.0)
    yield server
    server.close()


def _client(server, **kw):
    kw.setdefault("timeout_s", 0.5)
    kw.setdefault("max_retries", 1)
    kw.setdefault("backoff_s", 0.0)
    return OpenAICompatibleLLM(base_url=server.url, model="m", api_key_env="CFAUG_FAULT_KEY", **kw)


def test_every_fault_is_a_per_prompt_error_with_no_secret_anywhere(faults, monkeypatch, caplog, tmp_path):
    monkeypatch.setenv("CFAUG_FAULT_KEY", KEY)
    client = _client(faults, max_concurrency=len(FAULTS) + 1, cache_dir=str(tmp_path / "cache"),
                     max_response_bytes=1 << 20)
    prompts = [f"fault={name}\nrewrite this" for name in FAULTS] + ["fine\nrewrite this"]
    caplog.set_level(logging.DEBUG)
    t0 = time.monotonic()
    result = client.generate_with_info(prompts, seeds=list(range(len(prompts))))
    assert time.monotonic() - t0 < 30  # the drip is cut off by the deadline, not served for its 60 s twice
    assert result.texts[-1] == ["REWRITE THIS"] and result.errors[-1] is None
    for name, error in zip(FAULTS, result.errors):
        assert error or name == "echo_key_answer", f"fault {name} gave no error"  # that one answers, key scrubbed
    everything = "\n".join([*(e or "" for e in result.errors), caplog.text, repr(client),
                            json.dumps(client.get_config_dict())])
    assert KEY not in everything
    assert "redirect" in result.errors[FAULTS.index("redirect_loop")]
    client.save_pretrained(tmp_path / "llm")
    assert KEY not in "".join(p.read_text() for p in (tmp_path / "llm").iterdir())


def test_timeout_bounds_the_whole_attempt_not_each_read(faults):
    client = _client(faults, timeout_s=0.5, max_retries=0)
    t0 = time.monotonic()
    result = client.generate_with_info(["fault=drip\nx"])  # the server drips a byte every 50 ms for 60 s
    # anything far under the drip's 60 s shows the 0.5 s deadline cut it (a busy machine has half a minute of slack)
    assert time.monotonic() - t0 < 30 and result.errors[0].startswith("timeout after 0.5s")


def _exception_classes(module, base):
    return sorted({c for c in list(vars(module).values()) if isinstance(c, type) and issubclass(c, base)},
                  key=lambda c: f"{c.__module__}.{c.__name__}")


def _make(exc, message):
    """An instance of any httpx2 or openai exception class, whatever its constructor asks for."""
    import inspect

    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx2.Response(500, request=request, content=message.encode())
    fill = {"message": message, "request": request, "response": response, "body": None}
    params = [p for p in inspect.signature(exc.__init__).parameters.values() if p.name != "self"
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.default is p.empty]
    args = [fill.get(p.name, message) for p in params if p.kind != p.KEYWORD_ONLY]
    kwargs = {p.name: fill.get(p.name, message) for p in params if p.kind == p.KEYWORD_ONLY}
    return exc(*args, **kwargs)


TRANSPORT_ERRORS = [*_exception_classes(httpx2, Exception), *_exception_classes(openai, openai.OpenAIError)]


@pytest.mark.parametrize("where", ["sending", "reading the body"])
@pytest.mark.parametrize("exc", TRANSPORT_ERRORS, ids=lambda c: f"{c.__module__.split('.')[0]}.{c.__name__}")
def test_every_transport_exception_is_a_per_prompt_error(exc, where, monkeypatch):
    """The family: every exception class that httpx2 (below the SDK) or the openai SDK defines, raised where the
    request is sent (the SDK wraps some) and where its body is read (ours to catch): each is one prompt's error,
    never an exception out of generate, and never shows the key."""
    def fail(*args, **kwargs):
        raise _make(exc, f"boom with {KEY}")

    monkeypatch.setenv("CFAUG_FAULT_KEY", KEY)
    server = FaultServer()
    try:
        client = OpenAICompatibleLLM(base_url=server.url, model="m", api_key_env="CFAUG_FAULT_KEY", max_retries=1,
                                     backoff_s=0.0, timeout_s=0.5)
        monkeypatch.setattr(httpx2.Client, "send", fail) if where == "sending" else \
            monkeypatch.setattr(httpx2.Response, "iter_bytes", fail)
        result = client.generate_with_info(["a", "b"])
    finally:
        server.close()
    assert all(result.errors) and not any(KEY in e for e in result.errors), result.errors


def test_an_augmenter_over_a_faulty_endpoint_completes_and_counts_the_failures(faults, monkeypatch):
    from cfaug_hf import LLMCounterfactualAugmenter

    monkeypatch.setenv("CFAUG_FAULT_KEY", KEY)
    ds = Dataset.from_dict({"text": ["fault=reset great film", "fault=cut_short fine film", "a fine film"],
                            "label": ["positive", "positive", "positive"]})
    aug = LLMCounterfactualAugmenter(_client(faults), SENT, demonstrations=[])
    aug.augment(ds, load_from_cache_file=False)
    assert aug.stats.rows_in == 3 and aug.stats.skipped.get("llm_error") == 2


@pytest.mark.parametrize("base_url,removed", [("http://bob:hunter2@127.0.0.1:8000/v1", "user:password"),
                                              ("http://127.0.0.1:8000/v1?api-key=SECRETQ&api-version=2", "api-key")])
def test_credentials_in_base_url_are_stripped_with_a_warning(base_url, removed, caplog, faults):
    base_url = base_url.replace("127.0.0.1:8000", faults.url.split("/")[2])
    client = OpenAICompatibleLLM(base_url=base_url, model="m", api_key_env=None)
    assert removed in caplog.text and "hunter2" not in caplog.text and "SECRETQ" not in caplog.text
    shown = repr(client) + json.dumps(client.get_config_dict())
    assert "hunter2" not in shown and "SECRETQ" not in shown
    assert client.generate(["fine\nx"]) == [["X"]]
    request_line, headers = faults.seen[-1]
    assert "hunter2" not in str(headers) and "SECRETQ" not in request_line and "authorization" not in headers
    if "?" in base_url:  # kept query parameters go after the endpoint path, not into it
        assert request_line.split()[1] == "/v1/chat/completions?api-version=2"


@pytest.mark.parametrize("bad,match", [({"api_key_env": KEY}, "is not a name"),
                                       ({"timeout_s": float("nan")}, "timeout_s must be a finite number"),
                                       ({"timeout_s": 0}, "timeout_s > 0"),
                                       ({"base_url": "ftp://x/v1"}, "http:// or https://"),
                                       ({"base_url": "http://"}, "with a host"),
                                       ({"max_tokens": "many"}, "field 'max_tokens'")])
def test_bad_client_settings_fail_when_given_without_echoing_a_key(bad, match, tmp_path):
    with pytest.raises((ValueError, TypeError), match=match) as info:
        OpenAICompatibleLLM(**{"base_url": "http://127.0.0.1:9/v1", "model": "m", **bad})
    assert KEY not in str(info.value)


def test_a_cache_folder_that_is_a_file_fails_at_once(tmp_path):
    (tmp_path / "cache").write_text("x")
    with pytest.raises(ValueError, match="cache_dir .* is a file"):
        OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", model="m", api_key_env=None,
                            cache_dir=str(tmp_path / "cache"))


def test_a_raising_component_names_the_rows():
    from cfaug_hf import CrossAugAugmenter

    def broken(claims):
        raise ConnectionError("endpoint down")

    ds = Dataset.from_dict({"claim": ["Paris is in France."], "evidence": ["Paris is in France."],
                            "label": ["SUPPORTS"]})
    with pytest.raises(AugmentationError, match=r"batch of 1 row\(s\) \(row 0\).*ConnectionError: endpoint down"):
        CrossAugAugmenter(broken).augment(ds, load_from_cache_file=False)


# ------------------------------------------------------------------------------ 9. echoes and run-on answers
@pytest.mark.parametrize("answer,reason", [("echo", "llm_echo"), ("long", "llm_too_long")])
def test_core_and_the_llm_augmenter_drop_echoes_and_run_on_answers(answer, reason):
    from cfaug_hf import LLMCounterfactualAugmenter
    from cfaug_hf.methods.core import COREAugmenter

    def editor(prompts):
        return [p if answer == "echo" else "terrible " * 2000 for p in prompts]

    ds = Dataset.from_dict({"text": ["A fine film with a good cast."], "label": ["positive"]})
    core = COREAugmenter(retriever=None, editor=editor, mode="editor_only")
    core.augment(ds, load_from_cache_file=False)
    llm = LLMCounterfactualAugmenter(editor, SENT, demonstrations=[])
    llm.augment(ds, load_from_cache_file=False)
    for aug in (core, llm):
        assert aug.stats.counterfactuals == 0
        assert aug.stats.skipped.get(reason) == 1, aug.stats.to_dict()


# ------------------------------------------------------------------------------------------------ 6. cards
HOSTILE = ["a|b", "line\nbreak", "<script>alert(1)</script>", "<!-- cfaug:end -->", "```", "ok"]


def test_cards_escape_label_names_and_training_notes_and_merge_after_a_repush():
    from huggingface_hub import DatasetCard

    from hub_cards import dataset_card, merge_card

    schema = TaskSchema.sentiment(label_names=HOSTILE[:2])
    ds = Dataset.from_dict({"text": ["it was good", "it is bad"], "label": HOSTILE[:2]})
    aug = NegateAugmenter(schema)
    out = aug.augment(ds)
    card = dataset_card(out, "alice/x", augmenter=aug, pretty_name="<b>x</b>\n# y")
    text = str(card)
    body = text.split("\n---\n", 1)[1]  # the YAML metadata holds the pretty name quoted; the body renders
    assert "<b>" not in body and text.count("<!-- cfaug:end -->") == 1
    for line in text.splitlines():
        if line.startswith("| a"):
            assert line.count("|") - line.count("\\|") == 4  # the label cell kept its pipe escaped
    user = DatasetCard(text.replace("<!-- cfaug:begin", "My notes.\n\n<!-- cfaug:begin", 1))
    merged = merge_card(user, card)
    assert "My notes." in str(merged) and str(merged).count("<!-- cfaug:end -->") == 1


def test_component_cards_escape_training_info():
    from hub_cards import component_card

    checker = LabelChecker(*tiny_classifier(("negative", "positive")))
    checker.training_info = {"note|x": "<img src=x>\n<!-- cfaug:begin -->", "eval_acc": 0.5}
    text = str(component_card(checker, "alice/chk"))
    assert "<img" not in text and text.count("<!-- cfaug:begin") == 1


# -------------------------------------------------------------------------------------------- 7. callbacks
def test_callbacks_refuse_remove_unused_columns_and_negative_sizes(tmp_path):
    from transformers import TrainingArguments

    from trainer_callbacks import AugmentationCallback, AugmentedEpochDataset

    ds = Dataset.from_dict({"text": ["it was good", "it is bad"], "label": ["positive", "negative"]})
    with pytest.raises(ValueError, match="size must be a whole number >= 0, got -1"):
        AugmentedEpochDataset(ds, SENT, size=-1)
    epoch_ds = AugmentedEpochDataset(ds, SENT)
    with pytest.raises(ValueError, match="budget must be a whole number >= 0 or None, got -3"):
        AugmentationCallback(NegateAugmenter(SENT), epoch_ds, budget=-3)
    callback = AugmentationCallback(NegateAugmenter(SENT), epoch_ds)
    args = TrainingArguments(str(tmp_path), report_to=[])  # remove_unused_columns defaults to True
    with pytest.raises(ValueError, match="remove_unused_columns=False"):
        callback.on_train_begin(args, None, None)


def test_the_generic_callback_leaves_the_users_stats_alone():
    from trainer_callbacks import AugmentationCallback, AugmentedEpochDataset

    ds = Dataset.from_dict({"text": ["it was good", "it is bad"], "label": ["positive", "negative"]})
    aug = NegateAugmenter(SENT)
    callback = AugmentationCallback(aug, AugmentedEpochDataset(ds, SENT))
    for epoch in range(3):
        callback.generate(epoch)
    assert aug.stats.rows_in == 0 and callback.epoch_stats.rows_in == 2


# ---------------------------------------------------------------------------------------- fingerprints
def test_global_hooks_and_helper_modules_are_part_of_the_fingerprint():
    from cfaug_hf import CrossAugAugmenter, text
    from cfaug_hf.fingerprint import package_closure

    aug = CrossAugAugmenter(lambda claims: claims)
    before = aug.fingerprint()
    text.set_lemmatizer(lambda w: w[:3])
    try:
        assert aug.fingerprint() != before
    finally:
        text.set_lemmatizer(None)
    assert aug.fingerprint() == before
    assert {"cfaug_hf.text", "cfaug_hf.filters"} <= package_closure("cfaug_hf.methods.crossaug.augmenter")


# ------------------------------------------------------------------------------------------- 8. load fuzz
@pytest.fixture(scope="module")
def saved_generator(tmp_path_factory):
    from cfaug_hf import Generator
    from cfaug_hf.testing import tiny_seq2seq

    folder = tmp_path_factory.mktemp("gen") / "gen"
    Generator(*tiny_seq2seq(), num_beams=1, max_new_tokens=3).save_pretrained(folder)
    return folder


@settings(max_examples=int(os.environ.get("CFAUG_PROPERTY_EXAMPLES", 25)), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, 100), how=st.sampled_from(["truncate", "flip", "append", "empty", "json-type"]),
       where=st.floats(0, 1))
def test_a_randomly_damaged_component_fails_with_a_load_error_or_loads_with_a_warning(
        saved_generator, tmp_path_factory, caplog, which, how, where):
    import shutil

    from cfaug_hf import Generator

    folder = tmp_path_factory.mktemp("damaged") / "gen"
    shutil.copytree(saved_generator, folder)
    files = sorted(p for p in folder.iterdir() if p.name != "cfaug_manifest.json")
    target = files[which % len(files)]
    data = target.read_bytes()
    at = int(where * len(data))
    if how == "truncate":
        target.write_bytes(data[:at])
    elif how == "flip":
        target.write_bytes(data[:at] + bytes([(data[at] if at < len(data) else 0) ^ 0x5A]) + data[at + 1:])
    elif how == "append":
        target.write_bytes(data + b"\x00garbage")
    elif how == "empty":
        target.write_bytes(b"")
    else:
        target.write_text(json.dumps([1, 2, 3]))
    changed = target.read_bytes() != data
    caplog.clear()
    try:
        Generator.from_pretrained(folder)
    except ComponentLoadError as err:
        assert changed and (target.name in str(err) or str(folder) in str(err))
    else:  # a damage the loaders cannot see must at least be reported
        assert not changed or (target.name in caplog.text and "changed since it was saved" in caplog.text)
