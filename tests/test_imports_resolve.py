"""Every import the house's own files make resolves, including those inside functions, which run only when their
function does: a module moved or a name renamed fails here, not in the middle of an hour-long benchmark.

Covers the package, the benchmarks, the scripts, the examples and the tests themselves; imports of third-party
packages are left to their own install checks (``tests/test_packaging.py``).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from cfaug_hf.fingerprint import imported_names

ROOT = Path(__file__).resolve().parents[1]
OURS = ("cfaug_hf", "trainer_callbacks", "hub_cards", "benchmarks", "scripts", "tests")
FOLDERS = ("cfaug_hf", "trainer_callbacks", "hub_cards", "benchmarks", "scripts", "examples", "tests")


def _files() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py") if "fixtures" not in p.parts)


def _package(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts if parts[-1] == "__init__" else parts[:-1]).removesuffix(".__init__")


def unresolved(path: Path) -> list[str]:
    """The imports of ``path`` that name one of our modules or names that does not exist."""
    missing = []
    for base, names in imported_names(path.read_text(encoding="utf-8"), _package(path)):
        if not base.startswith(OURS) or base.split(".")[0] not in OURS:
            continue
        try:
            module = importlib.import_module(base)
        except ModuleNotFoundError as err:
            missing.append(f"{base} ({err})")
            continue
        for full in names:
            name = full.rpartition(".")[2]
            if name == "*" or hasattr(module, name):
                continue
            try:
                importlib.import_module(full)
            except ModuleNotFoundError:
                missing.append(full)
    return missing


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_import_of_our_own_modules_resolves(folder):
    broken = {str(p.relative_to(ROOT)): bad for p in _files() if p.relative_to(ROOT).parts[0] == folder
              for bad in [unresolved(p)] if bad}
    assert not broken, broken


def test_a_moved_module_is_caught(tmp_path):
    stale = ROOT / "benchmarks" / "_stale_import_probe.py"
    stale.write_text("def run():\n    from cfaug_hf.sharing.saving import build_augmenter\n")
    try:
        assert unresolved(stale) == ["cfaug_hf.sharing.saving (No module named 'cfaug_hf.sharing.saving')"]
    finally:
        stale.unlink()
