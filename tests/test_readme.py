"""Every Python snippet in the README and in docs/ runs as written, in order, like notebook cells; the docs build.

The real models the snippets name (SmolLM2, MiniLM) are swapped for tiny in-process ones of the same kinds by
resolving their Hub ids to tiny folders, ``runs/demo/generator`` and the shipped editors and claim generator are tiny
ones, and the Hub is the loopback server; nothing else about the code is changed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tests.hub_server as hub_server
from cfaug_hf import Generator, pretrained
from cfaug_hf.testing import tiny_causal_lm, tiny_encoder, tiny_seq2seq

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The docs pages in the order their snippets run (later pages use what earlier ones defined, as in a notebook).
DOCS = ["install", "usage", "contract", "cli", "methods/crossaug", "methods/editors", "components", "measure", "methods/icda",
        "methods/core", "methods/llm", "methods/race", "hub", "scale-out", "benchmarks", "licences", "changes", "index",
        "architecture"]


def snippets() -> list[tuple[str, str]]:
    found = []
    for path in [README, *(ROOT / "docs" / f"{page}.md" for page in DOCS)]:
        text = path.read_text()
        found += [(f"{path.relative_to(ROOT)}:{text[:m.start()].count(chr(10)) + 2}", m.group(1))
                  for m in re.finditer(r"```python\n(.*?)```", text, re.S)]
    return found


def test_every_docs_page_is_in_the_nav_and_in_the_snippet_order():
    import yaml

    pages = sorted(str(p.relative_to(ROOT / "docs"))[:-3] for p in (ROOT / "docs").rglob("*.md"))
    assert sorted(DOCS + ["api"]) == pages
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text().replace("!!python", ""))["nav"]

    def flat(items):
        for item in items:
            for value in item.values():
                yield from (flat(value) if isinstance(value, list) else [value[:-3]])
    assert sorted(flat(nav)) == pages


def test_docs_build_without_warnings(tmp_path):
    import subprocess
    import sys

    mkdocs = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT,
                          capture_output=True, text=True, env={**__import__("os").environ,
                                                               "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    assert api.count("augment") > 10
    home = (tmp_path / "site" / "index.html").read_text()
    assert "scripts/setup.sh" in home and 'href="install/"' in home and "dataset.map" in home.replace("claims.map", "dataset.map")
    # What a reader would see if a docstring were not in the configured (Google, Markdown) style: reST roles,
    # simple tables drawn as rows of "=", doctests outside an Examples section (Markdown quotes ">>>").
    for page in (tmp_path / "site").rglob("*.html"):
        html = page.read_text()
        where = page.relative_to(tmp_path / "site")
        assert not re.findall(r":(?:class|meth|func|attr|mod|data|exc|obj):", html), where
        assert not re.findall(r"(?m)^\s*={4,}(?:\s+={4,})+\s*$|<p>={4,}", html), where
        assert not re.findall(r"<blockquote>\s*(?:<p>)?&gt;&gt;&gt;", html), where
    # The API reference has what the quick starts import and what a user catches, and config fields carry their help.
    for name in ("cfaug_hf.pretrained.MINILM", "cfaug_hf.pretrained.load_model", "cfaug_hf.augmenter.Counterfactual",
                 "cfaug_hf.augmenter.RowResult", "cfaug_hf.methods.crossaug.CrossAugConfig",
                 "cfaug_hf.schema.SchemaError", "cfaug_hf.sharing.hub.HubError", "cfaug_hf.sharing.configs.ConfigError"):
        assert f'id="{name}"' in api, name
    from cfaug_hf import CrossAugConfig

    assert CrossAugConfig.help()["max_span_tokens"] in api.replace("&quot;", '"')


def test_library_docstrings_use_one_style():
    """Google-style sections with Markdown inside: no reST roles, literal blocks (``::``) or simple tables, and every
    doctest inside an ``Examples:`` section (the mkdocstrings handler is configured for exactly this)."""
    import ast

    bad = []
    for path in sorted(p for d in ("cfaug_hf", "trainer_callbacks", "hub_cards") for p in (ROOT / d).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            doc = ast.get_docstring(node, clean=True)
            if not doc:
                continue
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'name', '<module>')}"
            if re.search(r":(?:class|meth|func|attr|mod|data|exc|obj):`", doc):
                bad.append(f"{where}: reST role")
            if re.search(r"(?m)::$", doc):
                bad.append(f"{where}: reST literal block")
            if re.search(r"(?m)^\s*={3,}\s+={3,}", doc):
                bad.append(f"{where}: reST table")
            section = None
            for line in doc.splitlines():
                indent = len(line) - len(line.lstrip())
                if line.strip() and indent == 0:
                    section = line.strip() if line.strip() in ("Examples:", "Example:") else None
                if line.lstrip().startswith(">>>") and (section is None or indent == 0):
                    bad.append(f"{where}: doctest outside an Examples section")
                    break
    assert not bad, "\n".join(bad)


@pytest.fixture
def tiny_world(tmp_path, monkeypatch):
    causal_dir, encoder_dir = tmp_path / "_tiny_causal", tmp_path / "_tiny_encoder"
    for factory, folder in ((tiny_causal_lm, causal_dir), (tiny_encoder, encoder_dir)):
        model, tok = factory()
        model.save_pretrained(folder)
        tok.save_pretrained(folder)
    real = pretrained.resolve_model
    swap = {pretrained.SMOLLM2: str(causal_dir), pretrained.MINILM: str(encoder_dir)}

    def resolve(name_or_path, revision=None):
        name = str(name_or_path)
        if name in swap:
            return pretrained.ResolvedModel(name, swap[name], {}, embedded=True)
        return real(name_or_path, revision)

    monkeypatch.setattr(pretrained, "resolve_model", resolve)
    monkeypatch.chdir(tmp_path)
    Generator(*tiny_seq2seq(), num_beams=2, num_return_sequences=2, max_new_tokens=6).save_pretrained(
        "runs/demo/generator")
    # The shipped adapters fit the real SmolLM2, not its tiny stand-in: the shipped parts are tiny ones too.
    import cfaug_hf.components.editor as editor_module
    import cfaug_hf.methods.crossaug.recipes as recipes

    tiny_editor = editor_module.Editor(*tiny_causal_lm(), max_new_tokens=6, num_return_sequences=2)
    monkeypatch.setattr(editor_module, "_load_default", lambda task: tiny_editor)
    tiny_generator = Generator(*tiny_seq2seq(), num_beams=2, num_return_sequences=2, max_new_tokens=6)
    monkeypatch.setattr(recipes, "_load_claim_generator", lambda: tiny_generator)
    import cfaug_hf.components.checker as checker_module
    from cfaug_hf.testing import tiny_classifier

    labels = {"sentiment-analysis": ("negative", "positive"), "fact-verification": ("SUPPORTS", "REFUTES"),
              "natural-language-inference": ("entailment", "neutral", "contradiction")}
    monkeypatch.setattr(checker_module, "default_checker", lambda task: checker_module.LabelChecker(
        *tiny_classifier(labels[task])) if task in labels else None)
    monkeypatch.setitem(hub_server.TOKENS, "hf_you_write", "you")
    monkeypatch.setenv("HF_TOKEN", "hf_you_write")
    return tmp_path


def test_readme_snippets_run_as_written(tiny_world, capsys):
    found = snippets()
    assert len(found) >= 5
    namespace: dict = {"__name__": "readme"}
    for where, code in found:
        try:
            exec(compile(code, where, "exec"), namespace)
        except Exception as err:  # name the snippet, not just the line inside it
            raise AssertionError(f"The snippet at {where} failed: {type(err).__name__}: {err}") from err
    out = capsys.readouterr().out
    assert "rows in: 300" in out and "## Augmentation report" in out
    assert (tiny_world / "my-negclaim-generator" / "cfaug_generator.json").is_file()
    assert hub_server.ACTIVE.files("you/feverous-crossaug", repo_type="dataset")


def readme_command_lines() -> list[list[str]]:
    """The ``cfaug`` lines of the README's "Command line" block, comments dropped."""
    import shlex

    text = README.read_text()
    block = text[text.index("## Command line"):]
    block = block[block.index("```bash\n") + 8:]
    block = block[:block.index("```")]
    return [shlex.split(line.split("  #")[0])[1:] for line in block.splitlines() if line.startswith("cfaug ")]


def test_readme_command_lines_run_as_written(tiny_world, capsys):
    """The README's command block, in order, on the embedded claims and a tiny CAD file: every line succeeds, and
    its own push line publishes a card whose counts and report agree (the report describes the data pushed)."""
    import json

    from cfaug_hf.cli import main
    from cfaug_hf.data import load_feverous_sample

    load_feverous_sample().select(range(8)).to_json("claims.jsonl")
    Path("cad.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
        {"text": "It was dull. The end.", "counterfactual": "It was gripping. The end.", "target": "positive"},
        {"text": "A fine cast. Loved it.", "counterfactual": "A weak cast. Hated it.", "target": "negative"}]))
    lines = readme_command_lines()
    assert [argv[0] for argv in lines] == ["augment", "augment", "augment", "augment", "train", "report", "push"]
    for argv in lines:
        if "--help" in argv:
            with pytest.raises(SystemExit) as done:
                main(argv)
            assert done.value.code == 0
            continue
        if argv[:2] == ["train", "editor"]:
            argv = [*argv, "--max-steps", "1"]  # the one change: a tiny training run
        assert main(argv) == 0, (argv, capsys.readouterr())
    files = hub_server.ACTIVE.files("you/my-cf-data", repo_type="dataset")
    card = files["README.md"].decode()
    rows = len(__import__("datasets").load_from_disk("runs/x/data"))
    assert f"{rows}" in card and any(name.startswith("report/") for name in files), sorted(files)


def test_no_code_block_line_hides_a_comment_past_the_docs_sites_width():
    """The docs site shows about 88 characters of a code line before it scrolls: a comment that explains a line is
    put on its own line above it, so it is never cut off."""
    import re

    root = Path(__file__).resolve().parents[1]
    long = []
    for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        inside = False
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip().startswith("```"):
                inside = not inside
            elif inside and len(line) > 88 and (re.search(r"\S\s{2,}#\s", line) or line.lstrip().startswith("# ")):
                long.append(f"{page.relative_to(root)}:{number}")
    assert not long, long
