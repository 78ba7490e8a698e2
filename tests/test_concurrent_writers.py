"""One writer per folder, in real concurrent processes (issue 57, item 5).

Two ``cfaug augment ... --out SAME`` at once: the second stops before any work with the lock message (exit 2), the
first finishes untouched. Two ``save_pretrained`` into one folder at once: serialised, both succeed, and the folder
holds one whole save. Saved folders follow the user's umask (``mkdtemp`` made them private).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from datasets import Dataset

from cfaug_hf.sharing.folders import FolderBusyError, folder_lock

HOLD = r"""
import sys, time
from cfaug_hf.sharing.folders import folder_lock
with folder_lock(sys.argv[1], wait=False):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""

SAVE = r"""
import sys
from cfaug_hf import LabelChecker
from cfaug_hf.testing import tiny_classifier
for i in range(int(sys.argv[2])):
    LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES"), seed=int(sys.argv[3]))).save_pretrained(sys.argv[1])
print("saved", flush=True)
"""


def _env() -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}


def test_a_second_run_on_the_same_out_stops_before_any_work(tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out), "60"], stdout=subprocess.PIPE, text=True,
                              env=_env())
    try:
        assert holder.stdout.readline().strip() == "held"
        Dataset.from_dict({"claim": ["Paris is in France."], "evidence": ["Paris is in France."],
                           "label": ["SUPPORTS"]}).to_json(tmp_path / "rows.jsonl")
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "cfaug_hf.cli", "augment", str(tmp_path / "rows.jsonl"),
                               "--method", "crossaug", "--out", str(out)], capture_output=True, text=True,
                              env=_env(), timeout=300)
        took = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 2, done.stderr
    assert f"another run is writing {out} (pid {holder.pid})" in done.stderr and "--out" in done.stderr
    assert "augmentation" not in done.stderr  # no row was read: it stopped before the models loaded
    assert not out.exists()
    print(f"the second run stopped after {took:.1f} s")


def test_in_one_process_the_lock_is_reentrant_and_released(tmp_path):
    entered = []
    with folder_lock(tmp_path / "x", wait=False):
        with folder_lock(tmp_path / "x", wait=False):  # a command holding --out saves into it
            entered.append("nested")
    with folder_lock(tmp_path / "x", wait=False):  # released: taken again at once
        entered.append("again")
    assert entered == ["nested", "again"]


def test_a_held_folder_refuses_a_command_writer_at_once(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "x"), "60"], stdout=subprocess.PIPE,
                              text=True, env=_env())
    try:
        assert holder.stdout.readline().strip() == "held"
        try:
            with folder_lock(tmp_path / "x", wait=False):
                raise AssertionError("the lock was taken twice")
        except FolderBusyError as err:
            assert f"pid {holder.pid}" in str(err)
    finally:
        holder.kill()
        holder.wait()
    taken = False
    with folder_lock(tmp_path / "x", wait=False):  # a killed holder leaves no lock behind
        taken = True
    assert taken


def test_concurrent_saves_of_one_folder_are_serialised(tmp_path):
    target = tmp_path / "checker"
    procs = [subprocess.Popen([sys.executable, "-c", SAVE, str(target), "3", str(seed)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=_env()) for seed in (0, 1, 2)]
    results = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [[line for line in err.splitlines() if "shards" not in line][-8:]
                                                   for _, err in results]
    from cfaug_hf import LabelChecker

    checker = LabelChecker.from_pretrained(target)  # one whole save: its manifest matches its files
    assert list(checker.label_names) == ["SUPPORTS", "REFUTES"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_saved_folders_follow_the_umask(tmp_path):
    from cfaug_hf import LabelChecker
    from cfaug_hf.testing import tiny_classifier

    old = os.umask(0o022)
    try:
        LabelChecker(*tiny_classifier(("SUPPORTS", "REFUTES"))).save_pretrained(tmp_path / "shared")
    finally:
        os.umask(old)
    assert (tmp_path / "shared").stat().st_mode & 0o777 == 0o755


# ------------------------------------------------------------------------------------ locks that cannot be planted
@pytest.fixture
def locks_here(tmp_path, monkeypatch):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    return runtime / "cfaug_hf-locks"


@pytest.mark.parametrize("plant", ["lock symlink", "lock folder is a file", "lock folder symlink",
                                   "lock folder writable by others", "lock is a folder"])
def test_a_lock_path_not_made_by_the_library_is_a_clear_error(plant, locks_here, tmp_path, capsys):
    """Issue 80, item 8: a lock path pre-planted as a symlink, or the lock folder being a regular file, made every
    command with --out fail with "this looks like a bug"; a planted symlink could point the pid write at a file of
    the user's. The lock now lives in a per-user folder, checked, and anything else there is refused by name."""
    from cfaug_hf.cli import main
    from cfaug_hf.sharing.folders import LockPathError, lock_path

    victim = tmp_path / "victim.txt"
    victim.write_text("mine")
    target = tmp_path / "out"
    if plant == "lock folder is a file":
        locks_here.write_text("x")
    elif plant == "lock folder symlink":
        (tmp_path / "elsewhere").mkdir()
        locks_here.symlink_to(tmp_path / "elsewhere")
    elif plant == "lock folder writable by others":
        locks_here.mkdir()
        locks_here.chmod(0o777)
    else:
        path = lock_path(target)
        if plant == "lock symlink":
            path.symlink_to(victim)
        else:
            path.mkdir()
    with pytest.raises(LockPathError, match="cfaug"):
        with folder_lock(target, wait=False):
            pass
    assert victim.read_text() == "mine"
    (tmp_path / "rows.jsonl").write_text('{"claim": "Paris is in France.", "evidence": "Paris is in France.", '
                                         '"label": "SUPPORTS"}\n')
    assert main(["augment", str(tmp_path / "rows.jsonl"), "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert "looks like a bug" not in err and "Traceback" not in err and str(locks_here) in err, err
    assert victim.read_text() == "mine" and not target.exists()


def test_the_lock_folder_is_this_users_alone(locks_here, tmp_path):
    import stat

    with folder_lock(tmp_path / "x", wait=False):
        mode = stat.S_IMODE(locks_here.stat().st_mode)
        files = list(locks_here.iterdir())
    assert mode == 0o700 and files and all(stat.S_IMODE(f.stat().st_mode) & 0o077 == 0 for f in files)
