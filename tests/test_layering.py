"""Imports point one way: no cycle among the package's modules, counting imports inside functions too, and no load
by name (``import_module``, a lazy export) that runs up; ``if TYPE_CHECKING:`` blocks do not count.

A sixth method is a new package (or module) and nothing else: one is defined below and run through ``cfaug augment
--method``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cfaug_hf", "trainer_callbacks", "hub_cards")


def modules(packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def import_graph(packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    from cfaug_hf.fingerprint import imported_names

    mods = modules(packages)
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for base, subs in imported_names(path.read_text(), package):
            # ``from . import registry`` imports the submodule (the package's __init__ has already run: it is above)
            for target in (subs if subs and all(s in mods for s in subs) else [base, *subs]):
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    deps.add(target)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_no_import_cycles_among_the_benchmarks_and_scripts():
    assert cycles(import_graph(("benchmarks", "scripts"))) == []


def test_the_core_does_not_import_methods_cards_or_callbacks():
    graph = import_graph()
    core = [m for m in graph if m.startswith("cfaug_hf.") and m.split(".")[1] in
            ("assembly", "augmenter", "schema", "hub", "registry", "fingerprint", "text", "components", "provenance", "saving",
             "sharing", "workers", "configs", "credentials", "markdown")]
    for module in core:
        upward = {d for d in graph[module] if d.startswith(("cfaug_hf.methods", "hub_cards", "trainer_callbacks"))}
        assert not upward, f"{module} imports {sorted(upward)}"


#: Modules below the methods and the components: they may not import either, nor name a component class.
CORE = ("assembly", "augmenter", "schema", "hub", "registry", "fingerprint", "text", "provenance", "saving", "sharing", "workers",
        "configs", "credentials", "markdown", "filters", "generation", "verbosity", "pretrained", "data")


def test_the_core_names_no_component_or_method():
    graph = import_graph()
    for module in (m for m in graph if m.startswith("cfaug_hf.") and m.split(".")[1] in CORE):
        upward = {d for d in graph[module] if d.startswith(("cfaug_hf.components", "cfaug_hf.methods"))}
        assert not upward, f"{module} imports {sorted(upward)}"


def test_training_reads_no_method():
    """Training recipes sit below the methods: what both need (the keyword rule an editor is trained with and CORE
    prompts with) lives in the shared layers, so a method's package can change without touching training."""
    graph = import_graph()
    for module in (m for m in graph if m.startswith("cfaug_hf.training")):
        upward = {d for d in graph[module] if d.startswith(("cfaug_hf.methods", "cfaug_hf.cli"))}
        assert not upward, f"{module} imports {sorted(upward)}"


def test_the_registry_is_the_floor():
    """What a method declares (roles, presets) reaches nothing above it: a role asks the component classes which of
    them a folder holds (``Component.holds``) instead of reading folders itself."""
    graph = import_graph()
    for module in (m for m in graph if m.startswith("cfaug_hf.registry")):
        above = {d for d in graph[module] if not d.startswith(("cfaug_hf.registry", "cfaug_hf.schema"))}
        assert not above, f"{module} imports {sorted(above)}"


def _loads_by_name(path: Path) -> list[str]:
    """The module names that ``import_module``/``lazy_exports`` calls in ``path`` give as text (f-strings with
    ``{__name__}`` read as the module's own name)."""
    import ast

    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in
                ("import_module", "lazy_exports")):
            continue
        for arg in node.args[:1] + [v for a in node.args[1:2] if isinstance(a, ast.Dict) for v in a.values]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                names.append(arg.value)
            elif isinstance(arg, ast.JoinedStr):
                names.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in arg.values))
    return names


def test_loads_by_name_point_down():
    for name, path in modules().items():
        for target in _loads_by_name(path):
            # relative to the module's own package, or its own name plus a suffix: both below it
            assert target.startswith((".", "{}")), f"{name} loads {target!r} by name"
        if name == "cfaug_hf.registry":
            text = path.read_text()
            assert '"cfaug_hf' not in text and "'cfaug_hf" not in text, "the registry names no module"


def test_a_sixth_method_needs_no_edit_elsewhere(tmp_path, capsys):
    """A method defined in this test module: config fields and a component role become options of ``cfaug augment
    --method``, its task's columns are checked, and the saved augmenter loads back."""
    from dataclasses import dataclass, field

    from datasets import Dataset

    from cfaug_hf import Augmenter, Counterfactual, RowResult
    from cfaug_hf.augmenter import FlipCheckedConfig
    from cfaug_hf.cli import main
    from cfaug_hf.registry.roles import Role

    @dataclass
    class ShoutConfig(FlipCheckedConfig):  # a checker role: the flip decision's option comes with it
        suffix: str = field(default="!", metadata={"help": "what the shouted text ends with"})

    class ShoutAugmenter(Augmenter):
        method = "shout-sixth"
        default_task = "sentiment-analysis"
        config_class = ShoutConfig
        roles = {"checker": Role(("checker",), help="a label checker (unused here)")}

        def __init__(self, schema=None, config=None, *, checker=None, filters=None, **overrides):
            from cfaug_hf import TaskSchema

            super().__init__(schema or TaskSchema.preset(self.default_task), config, filters=filters, **overrides)
            self.checker = checker
            if checker is not None:
                self.filters.insert(0, self.label_flip_filter(checker))

        def augment_examples(self, examples):
            flip = {"positive": "negative", "negative": "positive"}
            return [RowResult([Counterfactual({"text": ex["text"].upper() + self.config.suffix}, flip[ex.label],
                                              "shout")], ["produced:shout"]) for ex in examples]

    data = tmp_path / "data.jsonl"
    Dataset.from_dict({"text": ["good film"], "label": ["positive"]}).to_json(data)
    with pytest.raises(SystemExit):
        main(["augment", str(data), "--method", "shout-sixth", "--help"])
    shown = capsys.readouterr().out
    assert "--suffix" in shown and "--checker" in shown and "a label checker" in shown
    assert "--checker-threshold" in shown and "one flip decision" in shown
    assert main(["augment", str(data), "--method", "shout-sixth", "--suffix", "?!", "--checker", "none",
                 "--out", str(tmp_path / "out")]) == 0
    from datasets import load_from_disk

    out = load_from_disk(str(tmp_path / "out" / "data"))
    assert list(out["text"]) == ["good film", "GOOD FILM?!"] and list(out["label"]) == ["positive", "negative"]
    back = Augmenter.from_pretrained(tmp_path / "out" / "augmenter")
    assert type(back) is ShoutAugmenter and back.config.suffix == "?!" and back.checker is None
    wrong = tmp_path / "wrong.jsonl"
    Dataset.from_dict({"review": ["good film"], "label": ["positive"]}).to_json(wrong)
    assert main(["augment", str(wrong), "--method", "shout-sixth", "--out", str(tmp_path / "o2")]) == 2
    assert "Column 'text' is missing" in capsys.readouterr().err


def test_a_method_with_a_checker_role_gets_the_one_flip_decision():
    """Issue 81, item 1: one option name on every method with a checker (CORE and RACE had none), one fallback rule,
    and a method of one's own that declares a checker role without the option is refused where it is defined."""
    from dataclasses import dataclass

    from cfaug_hf import Augmenter, AugmenterConfig, COREAugmenter, RACEAugmenter, TaskSchema
    from cfaug_hf.filters import FlipCheck
    from cfaug_hf.registry.roles import Role
    from cfaug_hf.testing import keyword_checker

    for cls in (COREAugmenter, RACEAugmenter, __import__("cfaug_hf").CrossAugAugmenter,
                __import__("cfaug_hf").LLMCounterfactualAugmenter):
        assert "checker_threshold" in cls.config_class.help(), cls
    checker = keyword_checker({"negative": ["bad"], "positive": ["good"]}, accept_threshold=0.6)
    core = COREAugmenter(lambda p: p, TaskSchema.sentiment(), mode="editor_only", checker=checker,
                         checker_threshold=0.8)
    assert core.filters[0].decision.threshold == 0.8 and core.flip_check(checker).need == 0.8
    assert FlipCheck(checker).threshold == 0.6  # the checker's calibrated one when none is given

    @dataclass
    class Plain(AugmenterConfig):
        pass

    with pytest.raises(TypeError, match="must derive from FlipCheckedConfig"):
        class Careless(Augmenter):
            method = "careless-flip-test"
            config_class = Plain
            roles = {"checker": Role(("checker",))}

            def augment_examples(self, examples):
                return []


def test_the_core_reaches_no_top_level_package_by_name():
    for path in (ROOT / "cfaug_hf").rglob("*.py"):
        text = path.read_text()
        for name in ("hub_cards", "trainer_callbacks"):
            assert f'import_module("{name}' not in text and f"import_module('{name}" not in text, path


def test_detects_a_cycle():
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]


def test_classes_register_themselves_and_load_by_name(tmp_path):
    from cfaug_hf import Augmenter, CrossAugAugmenter, TaskSchema, registry
    from cfaug_hf.testing import NegateAugmenter

    class Shout(NegateAugmenter):
        method = "shout-layering-test"

    class TweakedCrossAug(CrossAugAugmenter):  # inherits method "crossaug": must not take its place
        pass

    assert registry.augmenter_class("shout-layering-test") is Shout  # registered when it was defined
    assert registry.augmenter_class("crossaug") is CrossAugAugmenter
    assert {"crossaug", "icda"} <= set(registry.available()["augmenters"])
    Shout(TaskSchema.sentiment(), seed=3).save_pretrained(tmp_path / "aug")
    back = Augmenter.from_pretrained(tmp_path / "aug")
    assert type(back) is Shout and back.config.seed == 3
    with pytest.raises(KeyError, match="No augmenter method named 'nope'"):
        registry.augmenter_class("nope")


def test_a_method_states_its_name_task_config_and_roles_once(monkeypatch):
    from cfaug_hf import Augmenter, registry
    from cfaug_hf.methods.core.config import COREConfig
    from cfaug_hf.methods.icda.config import ICDAConfig

    monkeypatch.setattr(registry, "METHODS", dict(registry.METHODS))  # what this test declares goes with it
    core = registry.method_entry("core")
    cls = registry.augmenter_class("core")
    assert (cls.default_task, cls.config_class, cls.roles) == (core.task, core.config, core.roles)
    # the same declaration again (a module imported twice) is accepted; a different one under the name is not
    same = registry.register_method("core", task=core.task, config=COREConfig, roles=core.roles,
                                    augmenter=core.augmenter)
    assert same == core
    with pytest.raises(ValueError, match="method named 'core' is already declared.*choose another name"):
        registry.register_method("core", task="natural-language-inference", config=COREConfig,
                                 augmenter="mine:Mine")
    for bad in ("", "Core", "my method", "1st", "a/b", None):
        with pytest.raises(ValueError, match="lower-case letters"):
            registry.register_method(bad, task="", config=COREConfig, augmenter="mine:Mine")
    with pytest.raises(TypeError, match="config must be the method's config dataclass"):
        registry.register_method("mine-cfg", task="", config=COREConfig(), augmenter="mine:Mine")

    registry.register_method("declared-once-test", task="sentiment-analysis", config=ICDAConfig,
                             augmenter=f"{__name__}:nothing")

    class Declared(Augmenter):
        method = "declared-once-test"

        def augment_examples(self, examples):
            return []

    assert (Declared.default_task, Declared.config_class, Declared.roles) == ("sentiment-analysis", ICDAConfig, {})
    with pytest.raises(TypeError, match=r"Disagrees.default_task is 'token-classification' but the method "
                                        r"'declared-once-test' is declared with task='sentiment-analysis'"):
        class Disagrees(Augmenter):
            method = "declared-once-test"
            default_task = "token-classification"

            def augment_examples(self, examples):
                return []


def test_library_functions_are_short():
    """No function of the library over 60 lines, its docstring aside (the command line is a package of small
    commands; a method's batch is a few named steps)."""
    import ast

    long = []
    for path in modules().values():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                first = node.body[0]
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                        and isinstance(first.value.value, str):
                    lines -= first.end_lineno - first.lineno + 1
                if lines > 60:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, long


def test_the_package_root_stays_small():
    """What everything shares lives at the root; the rest is grouped (sharing/, text/, registry/, ...): 15 at most."""
    root = [p.name for p in (ROOT / "cfaug_hf").glob("*.py") if p.name not in ("__init__.py", "_version.py")]
    assert len(root) <= 15, sorted(root)
