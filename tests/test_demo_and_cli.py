import json

import pytest

from cfaug_hf import Generator, cli
from cfaug_hf.testing import tiny_seq2seq


@pytest.fixture
def tiny_recipe(monkeypatch):
    """The demo with its generator recipe swapped for a rule-based rewrite wrapped in a tiny Generator."""
    import cfaug_hf.methods.crossaug.recipes as recipes

    class RuleGenerator(Generator):
        def generate_with_info(self, texts, *, seeds=None):
            from cfaug_hf.components.generator import GenerationResult

            import re

            def rewrite(t):  # a year moved by one (a real edit) or a negation inserted
                year = re.search(r"\b(1[5-9]\d\d|20\d\d)\b", t)
                if year:
                    return t[:year.start()] + str(int(year.group()) + 1) + t[year.end():]
                return t.replace(" is ", " is not ", 1)

            outs = [[rewrite(t)] for t in texts]
            return GenerationResult(outs, [False] * len(texts), [[False]] * len(texts))

    monkeypatch.setattr(recipes, "negative_claim_generator",
                        lambda **kw: RuleGenerator(*tiny_seq2seq(), training_info={"global_step": 1}))
    monkeypatch.setattr(recipes, "default_claim_generator",
                        lambda: RuleGenerator(*tiny_seq2seq(), training_info={"global_step": 49}))


def test_demo_writes_outputs_and_summary(tmp_path, tiny_recipe, capsys):
    from cfaug_hf.demo import run_demo

    summary = run_demo(tmp_path / "demo")
    out = capsys.readouterr().out
    assert "rows in: 100" in out and "Example counterfactuals" in out and "[c+e']" in out
    assert "cfaug augment YOUR_DATA.jsonl --method crossaug" in out
    assert "shipped in the package" in out and not (tmp_path / "demo" / "generator").exists()  # no training step
    for name in ("original", "augmented", "augmented.jsonl", "stats.json", "report.md"):
        assert (tmp_path / "demo" / name).exists()
    stats = json.loads((tmp_path / "demo" / "stats.json").read_text())["stats"]
    assert stats == summary["stats"] and stats["rows_in"] == 100 and stats["counterfactuals"] > 0
    assert "CC BY-SA" in (tmp_path / "demo" / "report.md").read_text()


def test_cli_augment_crossaug_on_a_jsonl_file(tmp_path, capsys):
    rows = [{"claim": "Paris is big.", "evidence": ["Paris is big and old."], "label": "SUPPORTS"},
            {"claim": "Rome is small.", "evidence": ["Rome is large."], "label": "REFUTES"}]
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows))
    gen_dir = Generator(*tiny_seq2seq(), num_beams=1, max_new_tokens=3).save_pretrained(tmp_path / "gen")
    assert cli.main(["augment", str(data), "--method", "crossaug", "--generator", str(gen_dir), "--out",
                     str(tmp_path / "out")]) == 0
    assert "rows in: 2" in capsys.readouterr().out
    from datasets import load_from_disk
    assert len(load_from_disk(str(tmp_path / "out" / "data"))) >= 2


def test_the_removed_crossaug_command_prints_the_augment_line_that_runs(tmp_path, capsys):
    """`cfaug crossaug` (removed) answers with a `cfaug augment` line; that line, run, does the same work."""
    import shlex

    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"c": "Paris is big.", "evidence": ["Paris is big and old."], "label": "SUPPORTS"}))
    gen_dir = Generator(*tiny_seq2seq(), num_beams=1, max_new_tokens=3).save_pretrained(tmp_path / "gen")
    assert cli.main(["crossaug", str(data), "--generator", str(gen_dir), "--claim-column", "c", "--no-checker",
                     "--allow-deletions", "--counterfactuals-only", "--seed", "3", "--out", str(tmp_path / "o")]) == 2
    line = capsys.readouterr().err.split("run instead: ", 1)[1].strip()
    argv = shlex.split(line)
    assert argv[:2] == ["cfaug", "augment"] and "--no-keep-original" in argv and "--no-reject-deletions" in argv
    assert cli.main(argv[1:]) == 0
    assert "rows in: 1" in capsys.readouterr().out


def test_cli_rejects_unknown_file_type(tmp_path, capsys):
    bad = tmp_path / "data.xml"
    bad.write_text("<x/>")
    assert cli.main(["augment", str(bad), "--method", "crossaug", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "expected a saved dataset folder" in err and "Traceback" not in err


def test_demo_retrain_trains_and_then_reuses_its_own_generator(tmp_path, tiny_recipe, capsys):
    from cfaug_hf.demo import run_demo

    run_demo(tmp_path / "demo", retrain=True, generator_steps=1)
    assert "Training a negative-claim generator" in capsys.readouterr().out
    assert (tmp_path / "demo" / "generator" / "cfaug_generator.json").is_file()
    run_demo(tmp_path / "demo")
    assert "Reusing the generator trained earlier" in capsys.readouterr().out


def test_the_demo_writes_only_where_it_may(tmp_path, tiny_recipe, capsys):
    """Reported: `cfaug demo --out DIR` wrote report.md, stats.json, ... into any folder, replacing a user's files of
    those names. It now follows the rules of every other command: a folder of the user's is refused (nothing
    written), a rerun replaces its own files and keeps the user's, --overwrite writes beside other files."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "report.md").write_text("my report")
    assert cli.main(["demo", "--out", str(mine), "--rows", "3"]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert [p.name for p in mine.iterdir()] == ["report.md"] and (mine / "report.md").read_text() == "my report"
    out = tmp_path / "demo"
    assert cli.main(["demo", "--out", str(out), "--rows", "3"]) == 0
    (out / "notes.txt").write_text("mine")
    assert cli.main(["demo", "--out", str(out), "--rows", "4"]) == 0  # its own output: replaced
    assert json.loads((out / "stats.json").read_text())["stats"]["rows_in"] == 4
    assert (out / "notes.txt").read_text() == "mine"
    assert cli.main(["demo", "--out", str(mine), "--rows", "3", "--overwrite"]) == 0
    assert (mine / "stats.json").is_file()


def test_the_demo_shows_a_flip_first_and_says_what_each_kind_is():
    import json

    from datasets import Dataset

    from cfaug_hf.demo import format_examples

    edit_claim = {"claim": {"old": "over 30", "new": "under 10"}}
    edit_both = {**edit_claim, "evidence": {"piece": 0, "start": 13, "old": "over 30", "new": "under 10"}}
    rows = [("c'+e'", "s1", edit_both, "SUPPORTS"), ("c'+e", "s2", edit_claim, "REFUTES"),
            ("c+e'", "s3", {"from_claim": edit_claim["claim"], "evidence": edit_both["evidence"]}, "REFUTES")]
    data = Dataset.from_dict({"cf_kind": [r[0] for r in rows], "cf_source_id": [r[1] for r in rows],
                              "cf_edit": [json.dumps(r[2]) for r in rows], "label": [r[3] for r in rows],
                              "cf_original_label": ["SUPPORTS"] * 3, "claim": ["It was filmed under 10 days."] * 3,
                              "evidence": [["Filming took under 10 days."]] * 3})
    blocks = format_examples(data)
    assert [b.split("]")[0] for b in blocks] == ["[c+e'", "[c'+e", "[c'+e'"]
    assert "SUPPORTS -> REFUTES  (the original claim with the edited evidence: now refuted)" in blocks[0]
    assert "SUPPORTS -> SUPPORTS  (claim and evidence edited alike: still supported)" in blocks[2]
    # c+e' keeps its claim: the edit shown is the evidence's, carried over from the claim's negation
    assert "claim edit" not in blocks[0] and "It was filmed under 10 days.  (unchanged)" in blocks[0]
    assert "'over 30' -> 'under 10' (the claim's negation, applied to the evidence)" in blocks[0]
    assert "claim edit:    'over 30' -> 'under 10'" in blocks[1] and "(unchanged)" not in blocks[1]


def test_the_cfaug_program_caps_malloc_arenas_unless_the_user_chose(monkeypatch):
    """`cfaug` as a program asks glibc for 1 malloc arena (the demo's peak memory: 2.01 GB with 16, 1.81 with 2 on
    2026-11-28's machine; 2.14-2.20 with 2 and 2.06-2.07 with 1 on 2026-12-07's); a caller's
    process (main(argv)) and a user's own MALLOC_ARENA_MAX are left alone."""
    import ctypes

    import cfaug_hf.cli as cli

    calls = []

    class Libc:
        def mallopt(self, option, value):
            calls.append((option, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: Libc())
    monkeypatch.setattr(cli.sys, "platform", "linux")
    monkeypatch.setattr(cli.sys, "argv", ["cfaug", "--version"])
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    with pytest.raises(SystemExit):
        cli.main()
    assert calls == [(-8, 1)]
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    with pytest.raises(SystemExit):
        cli.main()
    assert calls == [(-8, 1)]
