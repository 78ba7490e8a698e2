"""`cfaug augment --method NAME` for every registered method on a few rows with tiny models: exit status, output
columns, stats and the saved augmenter; options generated from each config; recipes; `cfaug train`. Bad options and
bad recipes are rows of tests/test_bad_input.py (which also checks that nothing is written)."""

import json

import pytest
from datasets import load_from_disk

from cfaug_hf import Generator, LabelChecker, cli
from cfaug_hf.provenance import PROVENANCE_COLUMNS
from cfaug_hf.testing import tiny_causal_lm, tiny_classifier, tiny_seq2seq

CLAIMS = [{"claim": "Ada lived in Paris.", "evidence": ["Ada lived in Paris in 1900."], "label": "SUPPORTS"},
          {"claim": "Bob is a painter.", "evidence": ["Bob is a painter from Rome."], "label": "SUPPORTS"},
          {"claim": "Rome is small.", "evidence": ["Rome is large."], "label": "REFUTES"}]
REVIEWS = [{"text": "The food was great. The room was clean.", "label": "positive"},
           {"text": "The food was awful. The staff were rude.", "label": "negative"},
           {"text": "A fine stay. We would come back.", "label": "positive"}]
NER = [{"tokens": [name, "lives", "in", city], "ner_tags": ["B-PER", "O", "O", "B-LOC"]}
       for name, city in (("Ada", "Paris"), ("Bob", "Rome"), ("Cy", "Oslo"), ("Di", "Lima"))]


def write(tmp_path, name, rows):
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return str(path)


def run(args, capsys):
    code = cli.main(args)
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def check_output(out_dir, rows_in):
    data = load_from_disk(str(out_dir / "data"))
    stats = json.loads((out_dir / "stats.json").read_text())
    assert stats["rows_in"] == rows_in and len(data) == stats["rows_out"]
    assert set(PROVENANCE_COLUMNS) <= set(data.column_names)
    return data, stats


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    """Saved tiny components, once for the module."""
    root = tmp_path_factory.mktemp("parts")
    from cfaug_hf.components.editor import Editor
    from cfaug_hf.components.ner import LexiconNER
    from cfaug_hf.testing import tiny_encoder

    enc, tok = tiny_encoder()
    enc.save_pretrained(root / "encoder")
    tok.save_pretrained(root / "encoder")
    return {
        "seq2seq": str(Generator(*tiny_seq2seq(), num_beams=1, max_new_tokens=4).save_pretrained(root / "s2s")),
        "causal": str(Generator(*tiny_causal_lm(), num_beams=1, max_new_tokens=4).save_pretrained(root / "lm")),
        "editor": str(Editor(*tiny_causal_lm(), num_beams=1, max_new_tokens=4).save_pretrained(root / "editor")),
        "checker": str(LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES"))).save_pretrained(root / "checker")),
        "ner": str(LexiconNER({"Ada": "PERSON", "Bob": "PERSON", "Paris": "GPE", "Rome": "GPE"})
                   .save_pretrained(root / "ner")),
        "encoder": str(root / "encoder"),
    }


def test_every_registered_method_has_a_cli_test():
    tested = {name[len("test_cli_method_"):] for name in globals() if name.startswith("test_cli_method_")}
    from cfaug_hf.registry import AUGMENTERS, METHODS, method_names

    built_in = {n for n in method_names() if n in METHODS or AUGMENTERS[n].__module__.startswith("cfaug_hf.methods")}
    assert built_in == set(METHODS)  # every built-in method declares itself
    assert set(METHODS) <= tested


def test_cli_method_crossaug(tmp_path, capsys, parts):
    data = write(tmp_path, "claims.jsonl", CLAIMS)
    out = run(["augment", data, "--method", "crossaug", "--generator", parts["seq2seq"], "--checker", "none",
               "--max-span-tokens", "2", "--out", str(tmp_path / "o")], capsys)
    assert "rows in: 3" in out and "--augmenter" in out
    check_output(tmp_path / "o", 3)
    saved = json.loads((tmp_path / "o" / "augmenter" / "cfaug_augmenter.json").read_text())
    assert saved["method"] == "crossaug" and saved["config"]["max_span_tokens"] == 2
    assert saved["components"]["checker"] is None


def test_cli_method_core(tmp_path, capsys, parts):
    data = write(tmp_path, "reviews.jsonl", REVIEWS)
    run(["augment", data, "--method", "core", "--mode", "editor_only", "--editor", parts["editor"], "--checker",
         "none", "--out", str(tmp_path / "o")], capsys)
    _, stats = check_output(tmp_path / "o", 3)
    assert json.loads((tmp_path / "o" / "augmenter" / "cfaug_augmenter.json").read_text())["config"]["mode"] == \
        "editor_only"


def test_cli_method_llm(tmp_path, capsys, parts):
    data = write(tmp_path, "reviews.jsonl", REVIEWS)
    run(["augment", data, "--method", "llm", "--llm", parts["causal"], "--checker", "none", "--no-guidelines",
         "--out", str(tmp_path / "o")], capsys)
    check_output(tmp_path / "o", 3)


def test_cli_method_race(tmp_path, capsys, parts):
    data = write(tmp_path, "claims.jsonl", CLAIMS)
    run(["augment", data, "--method", "race", "--generator", parts["causal"], "--checker", parts["checker"],
         "--ner", parts["ner"], "--embedder", parts["encoder"], "--num-beams", "2", "--num-candidates", "2",
         "--max-new-tokens", "4", "--out", str(tmp_path / "o")], capsys)
    check_output(tmp_path / "o", 3)


@pytest.mark.shipped_checker
def test_cli_method_icda(tmp_path, capsys):
    # the default selector: occlusion with the sentiment flip checker shipped in the package
    data = write(tmp_path, "reviews.jsonl", REVIEWS)
    run(["augment", data, "--method", "icda", "--out", str(tmp_path / "o")], capsys)
    rows, stats = check_output(tmp_path / "o", 3)
    assert stats["counterfactuals"] >= 1
    saved = json.loads((tmp_path / "o" / "augmenter" / "cfaug_augmenter.json").read_text())
    assert saved["components"]["selector"] == "default"


def test_cli_method_cfgen(tmp_path, capsys):
    data = write(tmp_path, "ner.jsonl", NER)
    run(["augment", data, "--method", "cfgen", "--per-input", "2", "--out", str(tmp_path / "o")], capsys)
    rows, stats = check_output(tmp_path / "o", 4)
    assert stats["counterfactuals"] > 4  # two draws a row, a repeated draw counted once
    # the lexicon came from the data and is saved, so the augmenter reruns without it
    saved = json.loads((tmp_path / "o" / "augmenter" / "cfaug_augmenter.json").read_text())
    assert saved["config"]["lexicon"]["PER"] == {"Ada": 1, "Bob": 1, "Cy": 1, "Di": 1}
    run(["augment", data, "--augmenter", str(tmp_path / "o" / "augmenter"), "--out", str(tmp_path / "again")],
        capsys)
    again = load_from_disk(str(tmp_path / "again" / "data"))
    assert again.to_list() == rows.to_list()


def test_recipe_reruns_a_saved_augmenter_and_overrides_from_the_command_line(tmp_path, capsys):
    data = write(tmp_path, "ner.jsonl", NER)
    recipe = tmp_path / "cfgen.yaml"
    recipe.write_text("method: cfgen\nschema: {preset: ner}\nconfig:\n  per_input: 1\n")
    run(["augment", data, "--recipe", str(recipe), "--out", str(tmp_path / "a")], capsys)
    assert json.loads((tmp_path / "a" / "stats.json").read_text())["counterfactuals"] == 4
    run(["augment", data, "--recipe", str(recipe), "--per-input", "3", "--out", str(tmp_path / "b")], capsys)
    assert json.loads((tmp_path / "b" / "stats.json").read_text())["counterfactuals"] > 4
    # the saved augmenter's config is itself a recipe
    run(["augment", data, "--recipe", str(tmp_path / "b" / "augmenter" / "cfaug_augmenter.json"), "--out",
         str(tmp_path / "c")], capsys)
    assert load_from_disk(str(tmp_path / "c" / "data")).to_list() == \
        load_from_disk(str(tmp_path / "b" / "data")).to_list()


@pytest.mark.shipped_checker
@pytest.mark.parametrize("recipe,needs", [("crossaug-fever-checked", None), ("icda-hotel-occlusion", None),
                                          ("llm-sentiment-editor", None), ("crossaug-paper", None),
                                          ("llm-paper", None), ("core-imdb-editor", None),
                                          ("core-paper", None), ("icda-paper", "cfaug train selector"),
                                          ("race-feverous-occlusion", None),
                                          ("race-paper", None)])
def test_shipped_recipes_build_offline_or_name_what_they_need(recipe, needs):
    from pathlib import Path

    from cfaug_hf import Augmenter
    from cfaug_hf.sharing.folders import ComponentLoadError

    path = Path(__file__).resolve().parents[1] / "recipes" / f"{recipe}.yaml"
    if needs is None:
        import yaml

        named = yaml.safe_load(path.read_text()).get("components") or {}
        augmenter = Augmenter.from_recipe(path)
        assert augmenter.method == recipe.split("-")[0]
        # CORE's shipped index is built when first searched (minutes for the sentiment corpus), not here
        lazy = {"index"} if vars(augmenter).get("_index") == "default" else set()
        # a component the recipe names is built; one it sets to null (the paper: no checker) is off
        assert all((getattr(augmenter, role) is None) == (value is None) for role, value in named.items()
                   if role not in lazy)
    else:
        with pytest.raises(ComponentLoadError, match=needs):
            Augmenter.from_recipe(path)


# ------------------------------------------------------------------------------------------------- cfaug train
@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    """Tiny base models saved as folders, as a user's --base would be."""
    from cfaug_hf.testing import tiny_encoder

    root = tmp_path_factory.mktemp("bases")
    out = {}
    for name, (model, tok) in {"lm": tiny_causal_lm(), "s2s": tiny_seq2seq(), "encoder": tiny_encoder(),
                               "classifier": tiny_classifier(("SUPPORTS", "REFUTES"))}.items():
        model.save_pretrained(root / name)
        tok.save_pretrained(root / name)
        out[name] = str(root / name)
    return out


def test_cli_train_each_kind_saves_a_component_that_augment_loads(tmp_path, capsys, bases):
    from cfaug_hf.components.editor import Editor
    from cfaug_hf.components.rationale import RationaleSelector
    from cfaug_hf.components.retriever import BiEncoder, CorpusIndex

    steps = ["--max-steps", "2", "--batch-size", "2"]
    pairs = write(tmp_path, "pairs.jsonl", [{"source": "a cat sat", "target": "a cat did not sit"}] * 4)
    run(["train", "generator", pairs, "--base", bases["s2s"], "--no-lora", "--out", str(tmp_path / "gen"), *steps],
        capsys)
    assert Generator.from_pretrained(tmp_path / "gen").training_info["global_step"] == 2
    claims = write(tmp_path, "claims.jsonl", CLAIMS * 2)
    run(["train", "checker", claims, "--base", bases["encoder"], "--out", str(tmp_path / "chk"), *steps], capsys)
    assert LabelChecker.from_pretrained(tmp_path / "chk").label_names == ("SUPPORTS", "REFUTES")
    cfs = write(tmp_path, "cfs.jsonl", [{"text": r["text"], "counterfactual": r["text"].replace("great", "bad"),
                                         "target": "negative"} for r in REVIEWS])
    run(["train", "editor", cfs, "--base", bases["lm"], "--out", str(tmp_path / "ed"), *steps], capsys)
    assert isinstance(Editor.from_pretrained(tmp_path / "ed"), Editor)
    triples = write(tmp_path, "triples.jsonl", [{"query": "good film", "positive": "bad film",
                                                 "hard_negatives": ["good movie"]}] * 4)
    corpus = write(tmp_path, "corpus.jsonl", [{"text": t} for t in ("bad film", "fine day", "awful plot")])
    run(["train", "retriever", triples, "--base", bases["encoder"], "--corpus", corpus, "--out",
         str(tmp_path / "ret"), *steps], capsys)
    assert len(CorpusIndex.from_pretrained(tmp_path / "ret" / "index")) == 3
    BiEncoder.from_pretrained(tmp_path / "ret" / "encoder")
    docs = write(tmp_path, "docs.jsonl", REVIEWS * 4)
    out = run(["train", "selector", docs, "--base", bases["encoder"], "--out", str(tmp_path / "sel"), "--epochs",
               "1", "--iterations", "1", "--batch-size", "4"], capsys)
    assert "ICDA: 1 iteration" in out
    selector = RationaleSelector.from_pretrained(tmp_path / "sel")
    run(["augment", docs, "--method", "icda", "--selector", str(tmp_path / "sel"), "--out", str(tmp_path / "o")],
        capsys)
    assert selector.label_names == ["negative", "positive"]


def test_cli_train_refuses_data_without_its_columns(tmp_path, capsys, bases):
    data = write(tmp_path, "x.jsonl", [{"words": "a"}])
    assert cli.main(["train", "selector", data, "--base", bases["encoder"], "--out", str(tmp_path / "o")]) == 2
    assert "no column 'text'" in capsys.readouterr().err
    assert cli.main(["train", "editor", data, "--base", bases["lm"], "--out", str(tmp_path / "o2")]) == 2
    assert "counterfactual" in capsys.readouterr().err


def test_version_split_and_limit(tmp_path, capsys):
    """`cfaug --version`; --split picks a split of a saved DatasetDict (train by default), --limit the first rows,
    and a --split on a single file or an unknown split is refused in flag terms."""
    from datasets import Dataset, DatasetDict

    from cfaug_hf import __version__
    from cfaug_hf.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"cfaug {__version__}"
    rows = Dataset.from_dict({"tokens": [["Ada", "lives", "in", "Paris"]] * 5,
                              "ner_tags": [["B-PER", "O", "O", "B-LOC"]] * 5})
    DatasetDict({"train": rows, "validation": rows.select(range(2))}).save_to_disk(tmp_path / "dd")
    base = ["augment", str(tmp_path / "dd"), "--method", "cfgen", "--task", "token-classification"]
    for extra, rows_in in (([], 5), (["--split", "validation"], 2), (["--limit", "3"], 3)):
        out = tmp_path / f"out{rows_in}"
        assert main([*base, *extra, "--out", str(out)]) == 0
        assert json.loads((out / "stats.json").read_text())["rows_in"] == rows_in
    capsys.readouterr()
    assert main([*base, "--split", "test", "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert "--split test: " in err and "['train', 'validation']" in err
    write(tmp_path, "ner.jsonl", NER)
    assert main(["augment", str(tmp_path / "ner.jsonl"), "--method", "cfgen", "--split", "validation", "--out",
                 str(tmp_path / "bad2")]) == 2
    assert "is a single file" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists() and not (tmp_path / "bad2").exists()


def test_a_rerun_served_from_the_datasets_cache_says_so(tmp_path, capsys):
    from cfaug_hf.cli import main

    data = write(tmp_path, "ner.jsonl", NER)
    first = ["augment", data, "--method", "cfgen", "--out", str(tmp_path / "a")]
    assert main(first) == 0
    assert "datasets cache" not in capsys.readouterr().out
    assert main(["augment", data, "--augmenter", str(tmp_path / "a" / "augmenter"), "--out", str(tmp_path / "b")]) == 0
    assert "The rows came from the datasets cache" in capsys.readouterr().out


def test_a_missing_input_file_is_answered_before_the_methods_are_imported(tmp_path):
    """The commonest mistake is answered without importing torch, transformers or datasets (seconds)."""
    import subprocess
    import sys

    code = ("import sys; from cfaug_hf.cli import main; rc = main(['augment', 'nope.jsonl', '--method', 'crossaug', "
            "'--out', 'x']); print(rc, [m for m in ('torch', 'transformers', 'datasets') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.stdout.strip() == "2 []", done.stdout + done.stderr
    assert "nope.jsonl: no such file or folder." in done.stderr and not (tmp_path / "x").exists()


@pytest.mark.parametrize("name, compress", [("ner.jsonl.gz", "gzip"), ("ner.json.bz2", "bz2"), ("ner.jsonl.xz", "lzma")])
def test_a_compressed_data_file_is_read_as_its_inner_format(tmp_path, capsys, name, compress):
    import importlib

    from cfaug_hf.cli import main

    plain = write(tmp_path, "ner.jsonl", NER)
    packed = tmp_path / name
    packed.write_bytes(importlib.import_module(compress).compress(open(plain, "rb").read()))
    assert main(["augment", str(packed), "--method", "cfgen", "--out", str(tmp_path / "packed")]) == 0
    assert main(["augment", plain, "--method", "cfgen", "--out", str(tmp_path / "plain")]) == 0
    got, want = (load_from_disk(str(tmp_path / o / "data")) for o in ("packed", "plain"))
    assert got.num_rows == want.num_rows and got.to_list() == want.to_list()


def test_a_new_training_kind_is_a_dataclass_and_a_function(monkeypatch, tmp_path, capsys):
    import dataclasses

    from cfaug_hf.cli import train as train_cli

    monkeypatch.setattr(train_cli, "KINDS", dict(train_cli.KINDS))

    @dataclasses.dataclass
    class CountOptions(train_cli.TrainingOptions):
        word: str = train_cli._option("the", "the word to count")

    @train_cli.training_kind("counter", CountOptions, help="counts a word", description="Counts a word.")
    def _train_counter(args):
        rows = train_cli._data(args)
        print(f"{args.word}: {sum(t.split().count(args.word) for t in rows['text'])} (epochs {args.epochs})")

    data = tmp_path / "d.jsonl"
    data.write_text('{"text": "the cat the end"}\n{"text": "a dog"}\n')
    assert cli.main(["train", "counter", str(data), "--out", str(tmp_path / "o"), "--epochs", "2"]) == 0
    assert "the: 2 (epochs 2.0)" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        cli.main(["train", "counter", str(data), "--out", str(tmp_path / "o"), "--epochs", "0"])
    assert "--epochs" in capsys.readouterr().err
    with pytest.raises(ValueError, match="cfaug train counter is already defined"):
        train_cli.training_kind("counter", CountOptions, help="", description="")(_train_counter)


@pytest.mark.parametrize("argv,flag,wrong", [
    (["--method", "llm", "--task", "nli", "--targets", "bogus"], "--targets", "from_pretrained()"),
    (["--method", "llm", "--task", "nli", "--edit-side", "both"], "--edit-side", "edit_side"),
    (["--method", "llm", "--task", "sentiment", "--max-input-chars", "3"], "--max-input-chars", "max_input_chars"),
    (["--method", "core", "--task", "sentiment", "--mode", "bogus"], "--mode", "from_pretrained()"),
])
def test_a_config_value_refused_on_the_command_line_names_the_flag(argv, flag, wrong, tmp_path, capsys):
    """A config's own check said "from_pretrained() arguments: targets must be one of ..." on the command line,
    where the user typed --targets: it names the flag, and no Python call the user never made."""
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"text": "Great food.", "premise": "A man runs.", "hypothesis": "A man moves.",
                                "label": "positive" if "sentiment" in argv else "entailment"}) + "\n")
    assert cli.main(["augment", str(data), *argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{flag} must be" in err and wrong not in err, err


NLI = [{"premise": "A man sleeps on a bench in the park.", "hypothesis": "A man is asleep.", "label": "entailment"}]
_DEFAULT_RUNS = {"crossaug": (CLAIMS, []), "core": (NLI, ["--task", "nli"]), "llm": (REVIEWS, []),
                 "race": (CLAIMS, []), "icda": (REVIEWS, []), "cfgen": (NER, [])}


@pytest.mark.integration
@pytest.mark.shipped_checker
@pytest.mark.parametrize("method", sorted(_DEFAULT_RUNS))
def test_every_method_runs_from_the_command_line_with_no_component_flags(method, tmp_path, capsys, monkeypatch):
    """Issue 80, item 6: ``cfaug augment claims.jsonl --method race`` with no component flags failed after 94 s with
    ``RACEAugmenter.__init__() missing 3 required positional arguments``. Every registered method runs on the
    components it ships (options that are not components, such as --task, are allowed)."""
    from cfaug_hf.registry import METHODS, method_names

    method_names()  # registers the built-in methods
    assert set(_DEFAULT_RUNS) == set(METHODS)
    monkeypatch.setenv("CFAUG_HF_CACHE", str(tmp_path.parent / "cfaug-cache"))  # one CORE index for the module
    rows, options = _DEFAULT_RUNS[method]
    data = write(tmp_path, "rows.jsonl", rows)
    out = run(["augment", data, "--method", method, "--limit", "1", *options, "--out", str(tmp_path / "o")], capsys)
    assert "rows in: 1" in out
    check_output(tmp_path / "o", 1)


def test_race_without_spacy_says_so_before_loading_anything(monkeypatch, tmp_path, capsys):
    import importlib.util

    from cfaug_hf.methods.race import shipped

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name.startswith(("spacy", "en_core"))
                        else real(name, *a))
    monkeypatch.setattr(shipped, "shipped_generator", lambda: pytest.fail("loaded the generator first"))
    data = write(tmp_path, "claims.jsonl", CLAIMS)
    assert cli.main(["augment", data, "--method", "race", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "pip install 'cfaug-hf[spacy]'" in err and "--ner" in err and "looks like a bug" not in err, err
