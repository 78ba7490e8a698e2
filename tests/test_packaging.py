"""The wheel a user installs carries the package's shipped data (generator, editors, checkers, the embedded sample,
metric scripts, card templates), and the library reads that data from the installed copy, not from a checkout."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cfaug_hf", "trainer_callbacks", "hub_cards")


def build_wheel(out: Path) -> Path:
    # --no-build-isolation: setuptools is already in the environment, and nothing may be downloaded here.
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", str(ROOT),
                           "-w", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    (wheel,) = out.glob("cfaug_hf-*.whl")
    return wheel


def test_the_wheel_carries_every_tracked_package_file_and_installs_working(tmp_path):
    wheel = build_wheel(tmp_path / "dist")
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = subprocess.run(["git", "ls-files", *PACKAGES], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    assert tracked and not [f for f in tracked if f not in names]
    assert any(n.startswith("cfaug_hf/data/editors/sentiment/") and n.endswith(".safetensors") for n in names)
    meta = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "cfaug = cfaug_hf.cli:main" in zipfile.ZipFile(wheel).read(meta).decode()

    # Install the wheel alone into a folder and use it from somewhere else: the shipped data must come from there.
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
                   check=True, capture_output=True)
    code = ("import json, cfaug_hf\nfrom cfaug_hf.data import CHECKER_DIR, load_feverous_sample\n"
            "print(json.dumps({'file': cfaug_hf.__file__, 'rows': len(load_feverous_sample()),"
            " 'checkers': sorted(p.name for p in CHECKER_DIR.iterdir())}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                               "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["file"].startswith(str(target)) and seen["rows"] == 300
    assert seen["checkers"] == ["claims", "nli", "sentiment"]


def test_no_shipped_file_names_a_folder_of_the_machine_it_was_built_on():
    """peft records an adapter's base by the path it was loaded from (a cache or site-packages folder); the shipped
    folders name bases by Hub id, as a folder pushed to the Hub must."""
    from cfaug_hf.data import DATA_DIR

    local = ("/root/", "/home/", "/work/", "/tmp/", "site-packages", "\\Users\\")
    for path in sorted(DATA_DIR.rglob("*")):
        if path.is_file() and path.suffix in (".json", ".md", ".jsonl", ".yaml"):
            text = path.read_text(encoding="utf-8")
            assert not [m for m in local if m in text], f"{path.relative_to(DATA_DIR)} names a local folder"
