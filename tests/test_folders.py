"""Writing output folders: no user file is ever lost, moved or left behind, whatever interrupts a save.

The family of "a second door to data loss" tried here:

* every writer goes through :func:`cfaug_hf.sharing.folders.write_folder` (components, augmenters, datasets, the Ray Parquet
  output, the run folders of ``cfaug demo``, ``augment``, ``amplify``, ``report``, ``train``);
* a save killed (a real SIGKILL) at every step of the write and of the move into place, over folders holding the
  user's files at the top and inside the library's own subfolders;
* saves of a smaller object over a bigger one (stale files), of another kind, with and without ``overwrite``;
* leftovers of earlier releases (a ``.NAME.XXXX.old`` folder holding the user's files) restored by the next call.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from cfaug_hf.sharing import folders as hub
from cfaug_hf.sharing.folders import FolderNotEmptyError, recover_folder, write_folder

EXAMPLES = int(os.environ.get("CFAUG_PROPERTY_EXAMPLES", "200"))

LIBRARY_NAMES = ["model.bin", "config.json", "data/part-0.arrow", "data/part-1.arrow", "data/sub/state.json",
                 "tokenizer/vocab.txt"]
USER_NAMES = ["notes.txt", "u/plan.md", "data/mine.csv", "tokenizer/my-notes.txt", "deep/er/file.bin"]


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _save(target: Path, files: dict[str, bytes], *, overwrite: bool = True) -> None:
    with write_folder(target, "widget", overwrite=overwrite) as tmp:
        for rel, data in files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(data)


def _killed_save(target: Path, files: dict[str, bytes], kill_at: int) -> bool:
    """Run a save in a forked child that SIGKILLs itself at its ``kill_at``-th step (a real kill: no cleanup, no
    ``finally``). Returns whether the child died (False: it finished before reaching that step)."""
    pid = os.fork()
    if pid == 0:  # the child
        try:
            steps = [0]

            def die(step: str) -> None:
                steps[0] += 1
                if steps[0] == kill_at:
                    os.kill(os.getpid(), signal.SIGKILL)

            hub._crash_point = die
            with write_folder(target, "widget", overwrite=True) as tmp:
                for rel, data in files.items():
                    (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                    (tmp / rel).write_bytes(data)
                    die("block")  # also dies half-way through writing the new files
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status)


def _library_view(root: Path, user: dict[str, bytes]) -> dict[str, bytes]:
    return {rel: data for rel, data in _tree(root).items() if rel not in user and rel != hub.MANIFEST}


class SaveKillResave(RuleBasedStateMachine):
    """Saves, re-saves, saves killed at any step and user files added at any time: after every step each user file
    is byte-identical where the user put it, and the library's files are exactly one complete save (never a mix)."""

    def __init__(self) -> None:
        super().__init__()
        import tempfile

        self.root = Path(tempfile.mkdtemp(prefix="cfaug-folders-"))
        self.target = self.root / "out"
        self.user: dict[str, bytes] = {}
        self.saved: dict[str, bytes] | None = None  # the library's files of the last complete save

    def teardown(self) -> None:
        import shutil

        shutil.rmtree(self.root, ignore_errors=True)

    @rule(name=st.sampled_from(USER_NAMES), data=st.binary(max_size=64))
    def user_writes_a_file(self, name: str, data: bytes) -> None:
        path = self.target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.user[name] = data

    @rule(names=st.lists(st.sampled_from(LIBRARY_NAMES), min_size=1, max_size=6, unique=True),
          version=st.integers(0, 3))
    def save(self, names: list[str], version: int) -> None:
        files = {n: f"{n} v{version}".encode() for n in names}
        _save(self.target, files)
        self.saved = files

    @rule(names=st.lists(st.sampled_from(LIBRARY_NAMES), min_size=1, max_size=6, unique=True),
          version=st.integers(4, 9), kill_at=st.integers(1, 20))
    def killed_save(self, names: list[str], version: int, kill_at: int) -> None:
        files = {n: f"{n} v{version}".encode() for n in names}
        if not _killed_save(self.target, files, kill_at):
            self.saved = files  # finished before the kill point
            return
        self.check_user_files()  # even before anything repairs it, no user file has moved
        recover_folder(self.target)
        view = _library_view(self.target, self.user)
        assert view in (self.saved or {}, files), f"a mix of two saves: {sorted(view)}"
        self.saved = view if view else self.saved

    @rule()
    def recover(self) -> None:
        recover_folder(self.target)

    @invariant()
    def check_user_files(self) -> None:
        if not self.target.exists():
            return
        tree = _tree(self.target)
        for rel, data in self.user.items():
            assert tree.get(rel) == data, f"the user's {rel} was lost or changed"
        leftovers = [p.name for p in self.root.iterdir() if p.name != "out"]
        if leftovers and not any((self.root / n / hub._COMMIT).exists() for n in leftovers):
            # only an unfinished save may leave a sibling, and only until the next call
            assert all(n.endswith(".tmp") for n in leftovers), leftovers

    @invariant()
    def library_files_are_one_save(self) -> None:
        if self.saved is None or not self.target.exists():
            return
        if any(p.name.endswith(".tmp") for p in self.root.iterdir()):
            return  # a killed save waiting for the next call
        assert _library_view(self.target, self.user) == self.saved


SaveKillResave.TestCase.settings = settings(max_examples=EXAMPLES, stateful_step_count=8, deadline=None,
                                            suppress_health_check=list(HealthCheck))
test_save_kill_resave_never_loses_a_user_file = SaveKillResave.TestCase


_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from cfaug_hf.sharing.folders import write_folder
    target, n, version = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    print("ready", flush=True)
    with write_folder(target, "widget", overwrite=True) as tmp:
        for i in range(n):
            (tmp / f"shard-{i:05d}.bin").write_text(f"{i} {version}")
""")


@pytest.mark.parametrize("seed", range(4))
def test_a_real_sigkill_at_a_random_moment_leaves_every_user_file_in_place(tmp_path, seed):
    """The issue's report: a SIGKILL during a save over a folder holding 3000 user files. Each seed kills the writer
    at another moment (while writing, while committing, or after); the user's files never move, and the next save
    completes."""
    import random

    rng = random.Random(seed)
    target = tmp_path / "out"
    target.mkdir()
    user = {f"user-{i:04d}.txt": f"mine {i}".encode() for i in range(3000)}
    for rel, data in user.items():
        (target / rel).write_bytes(data)
    _save(target, {f"shard-{i:05d}.bin": f"{i} v0".encode() for i in range(500)})
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(target), "1500", "v1"], stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"ready"
    import time

    time.sleep(rng.uniform(0.0, 0.6))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    tree = _tree(target)
    assert all(tree.get(rel) == data for rel, data in user.items())
    recover_folder(target)
    library = {rel: data for rel, data in _tree(target).items() if rel.startswith("shard-")}
    assert len(library) in (500, 1500)
    version = b"v0" if len(library) == 500 else b"v1"
    assert all(data.endswith(version) for data in library.values())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    _save(target, {"shard-00000.bin": b"again"})
    tree = _tree(target)
    assert all(tree.get(rel) == data for rel, data in user.items())
    assert sorted(rel for rel in tree if rel not in user) == [hub.MANIFEST, "shard-00000.bin"]


def test_an_earlier_releases_leftover_gives_the_users_files_back(tmp_path):
    """Earlier releases moved the whole folder aside (``.NAME.XXXX.old/x``) and moved the user's files back one by
    one; a kill in between left them there. The next call puts them back and drops the library's old files."""
    target = tmp_path / "out"
    _save(target, {"model.bin": b"new"})
    old = tmp_path / ".out.abcd1234.old" / "x"
    old.mkdir(parents=True)
    (old / "notes.txt").write_text("mine")
    (old / "sub").mkdir()
    (old / "sub" / "plan.md").write_text("also mine")
    (old / "old.bin").write_text("ours")
    import json

    (old / hub.MANIFEST).write_text(json.dumps({"kind": "widget", "files": ["old.bin"],
                                                "digests": {"old.bin": hub.file_digest(old / "old.bin")}}))
    _save(target, {"model.bin": b"newer"})
    tree = _tree(target)
    assert tree["notes.txt"] == b"mine" and tree["sub/plan.md"] == b"also mine" and "old.bin" not in tree
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_earlier_releases_leftover_with_the_folder_moved_aside_is_restored_whole(tmp_path):
    target = tmp_path / "out"
    old = tmp_path / ".out.zz99yy88.old" / "x"
    old.mkdir(parents=True)
    (old / "notes.txt").write_text("mine")
    (tmp_path / ".out.qwertyui.tmp").mkdir()  # the new save that never moved in
    (tmp_path / ".out.qwertyui.tmp" / "model.bin").write_text("half")
    assert recover_folder(target)
    assert _tree(target) == {"notes.txt": b"mine"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_user_file_where_the_library_needs_a_folder_is_refused_before_anything_moves(tmp_path):
    target = tmp_path / "out"
    _save(target, {"model.bin": b"v1"})
    (target / "data").write_text("my data file")
    with pytest.raises(FolderNotEmptyError, match="data.*a file of yours where a folder goes"):
        _save(target, {"data/part-0.arrow": b"x"})
    assert _tree(target)["data"] == b"my data file" and _tree(target)["model.bin"] == b"v1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_another_process_saving_is_left_alone(tmp_path):
    """A temporary folder of a live process (here: this one's parent) is not an interrupted save."""
    live = tmp_path / f".out.{os.getppid()}-abcdefgh.tmp"
    live.mkdir()
    dead = tmp_path / ".out.999999999-abcdefgh.tmp"
    dead.mkdir()
    recover_folder(tmp_path / "out")
    assert live.is_dir() and not dead.exists()
