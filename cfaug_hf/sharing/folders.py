"""Folders for everything the library saves: atomic writes that never delete a user's files, a manifest that lets a
load check nothing is missing, and versioned JSON configs.

Saving into a folder follows three rules:

* an empty or missing folder, or a folder that already holds a saved object of the same kind, is (re)written;
* a non-empty folder holding anything else is refused unless ``overwrite=True``;
* files the library did not write are never deleted: they are carried over into the new folder.

Every saved folder gets a ``cfaug_manifest.json`` naming its kind and the files written; loading checks that each of
them is still there, so a folder with its tokenizer deleted fails with the file's name instead of loading an empty
tokenizer.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from ..verbosity import get_logger

logger = get_logger(__name__)

__all__ = ["ComponentLoadError", "FolderNotEmptyError", "FolderBusyError", "LockPathError", "lock_folder", "lock_path",
           "folder_lock", "MANIFEST", "HIDDEN_MANIFEST", "FORMAT_VERSION",
           "write_folder", "check_writable", "recover_folder", "save_dataset", "owned_files", "file_digest",
           "path_inside", "leaves_folder", "folder_inside", "is_pulled", "read_manifest", "refresh_digest",
           "folder_kind", "check_manifest", "check_weight_files", "check_json_files", "read_versioned_json"]
#: Version of the on-disk layout of saved objects. Loading a folder written with a newer version is refused.
FORMAT_VERSION = 1

#: Written into every folder the library saves: its kind and the files the library wrote.
MANIFEST = "cfaug_manifest.json"
#: The same, hidden, in folders of data files that readers take whole (``load_dataset("parquet", data_dir=...)``
#: reads every file that is not hidden).
HIDDEN_MANIFEST = ".cfaug_manifest.json"
_MANIFESTS = (MANIFEST, HIDDEN_MANIFEST)

#: Files up to this size are checked against their manifest digest at load time.
_DIGEST_CHECK_BYTES = 32 * 1024 * 1024

#: Config files that mark a folder saved before manifests existed, by kind.
_LEGACY_MARKERS = {"cfaug_generator.json": "generator", "cfaug_checker.json": "checker",
                   "cfaug_rationale.json": "rationale_selector", "cfaug_augmenter.json": "augmenter"}

_PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")



class ComponentLoadError(OSError):
    """A folder or repository is not a saved object of the expected kind, is incomplete, or was saved by a newer
    version; the message names the folder and the file."""


class FolderNotEmptyError(FileExistsError):
    """Refusing to write into a non-empty folder that holds something other than a saved object of the same kind."""


class FolderBusyError(FolderNotEmptyError):
    """Another process is writing the folder (it holds the folder's lock)."""


#: Longest wait of a save for another process writing the same folder, in seconds.
LOCK_WAIT_S = 600.0


class LockPathError(PermissionError):
    """The lock's folder or file is not what the library made (a symlink, a file where a folder belongs, another
    user's, writable by others): refused, so that nobody else can plant a lock or point one at a file of yours."""


def lock_folder() -> Path:
    """Where this user's folder locks live: ``$XDG_RUNTIME_DIR/cfaug_hf-locks`` (a per-user folder the system makes
    for this), else ``$XDG_CACHE_HOME/cfaug_hf/locks`` (``~/.cache``); made with mode 0700 and checked to be a real
    folder of this user that no one else may write, so another local user cannot pre-create a lock in it.

    Raises:
        LockPathError: the folder is a symlink or a file, belongs to another user, or others may write it.
    """
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        folder = Path(runtime) / "cfaug_hf-locks"
    else:
        folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cfaug_hf" / "locks"
    if not os.path.lexists(folder):
        try:
            folder.mkdir(parents=True, mode=0o700, exist_ok=True)
        except OSError as err:
            raise LockPathError(f"{folder}: cannot make the folder of cfaug's locks ({err.strerror}); set "
                                f"XDG_RUNTIME_DIR or XDG_CACHE_HOME to a folder of yours.") from None
    _check_lock_path(folder, "folder")
    return folder


def _check_lock_path(path: Path, kind: str) -> None:
    import stat

    info = os.lstat(path)
    is_kind = stat.S_ISDIR(info.st_mode) if kind == "folder" else stat.S_ISREG(info.st_mode)
    what = "folder of cfaug's locks" if kind == "folder" else "lock file"
    if not is_kind:
        found = "a symlink" if stat.S_ISLNK(info.st_mode) else "a folder" if stat.S_ISDIR(info.st_mode) else (
            "a file" if stat.S_ISREG(info.st_mode) else "a special file")
        raise LockPathError(f"{path}: the {what} is {found}, not what cfaug made; refusing to use it (remove it, and "
                            f"cfaug makes a new one).")
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise LockPathError(f"{path}: the {what} belongs to another user (uid {info.st_uid}); refusing to use it "
                            f"(remove it, or set XDG_RUNTIME_DIR to a folder of yours).")
    if kind == "folder" and info.st_mode & 0o022:
        raise LockPathError(f"{path}: the {what} may be written by other users (mode {stat.S_IMODE(info.st_mode):o}); "
                            f"refusing to use it (chmod 700 it, or remove it).")


def lock_path(target: str | os.PathLike) -> Path:
    """The lock file of the folder ``target`` (named after its real path) in `lock_folder`."""
    target = Path(os.path.realpath(os.fspath(target)))
    return lock_folder() / f"{hashlib.sha256(os.fsencode(target)).hexdigest()[:32]}.lock"


@contextlib.contextmanager
def folder_lock(target: str | os.PathLike, *, wait: bool = True) -> Iterator[None]:
    """Hold the lock of the folder ``target`` (through ``filelock``, a file in this user's `lock_folder` named
    after the folder's real path, so nothing is left among the user's files): one writer at a time, across this
    user's processes. ``wait``: wait up to `LOCK_WAIT_S` for another writer to finish (a save);
    otherwise fail at once (a command, which should not start hours of work it cannot write). Re-entrant within a
    thread, so a command holding its ``--out`` can save into it. The lock goes with the process that holds it, so a
    killed run leaves none behind.

    Raises:
        FolderBusyError: another process holds the lock; the message names its pid.
        LockPathError: the lock's folder or file is not what the library made (see `lock_folder`).
    """
    from filelock import FileLock, Timeout

    target = Path(os.path.realpath(os.fspath(target)))
    path = lock_path(target)
    if os.path.lexists(path):
        _check_lock_path(path, "file")
    lock = FileLock(path, mode=0o600, is_singleton=True)
    try:
        lock.acquire(timeout=LOCK_WAIT_S if wait else 0)
    except Timeout:
        try:
            holder = f" (pid {int(path.read_text().strip())})"
        except (OSError, ValueError):
            holder = ""
        raise FolderBusyError(f"{target}: another run is writing it{holder}; wait for it to finish, or choose "
                              f"another folder.") from None
    try:
        if lock.lock_counter == 1:
            with contextlib.suppress(OSError):
                fd = os.open(path, os.O_WRONLY | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0))
                with os.fdopen(fd, "w") as f:
                    f.write(f"{os.getpid()}\n")
        yield
    finally:
        lock.release()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ------------------------------------------------------------------------------------------------------- folders
def read_manifest(folder: str | os.PathLike) -> dict[str, Any] | None:
    path = Path(folder) / MANIFEST
    if not path.is_file():
        path = Path(folder) / HIDDEN_MANIFEST
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ComponentLoadError(f"{path} is not valid JSON: the folder's manifest is damaged.") from None
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        raise ComponentLoadError(f"{path} is not a cfaug_hf manifest (expected {{'kind': ..., 'files': [...]}}).")
    return data


def refresh_digest(folder: str | os.PathLike, rel: str) -> None:
    """Record ``folder/rel``'s current digest in the folder's manifest, after the library itself rewrote that file
    (the card a push merges with the one on the Hub), so a later load or pull does not warn that it changed."""
    path = Path(folder) / MANIFEST
    manifest = read_manifest(folder)
    if manifest is None or not path.is_file() or not isinstance(manifest.get("digests"), dict):
        return
    if rel in manifest["digests"] or rel in manifest["files"]:
        manifest["digests"][rel] = file_digest(Path(folder) / rel)
        if rel not in manifest["files"]:
            manifest["files"].append(rel)
        path.write_text(json.dumps(manifest, indent=2) + "\n")


def folder_kind(folder: str | os.PathLike) -> str | None:
    """The kind of saved object in ``folder`` (``generator``, ``augmenter``, ...), or None if it holds none."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    manifest = read_manifest(folder)
    if manifest is not None:
        return manifest.get("kind")
    for marker, kind in _LEGACY_MARKERS.items():
        if (folder / marker).is_file():
            return kind
    return None


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink())


def file_digest(path: Path) -> str:
    """``sha256:<hex>`` of a file's bytes: how a manifest proves that a file is still the one the library wrote."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return f"sha256:{h.hexdigest()}"


def owned_files(folder: Path, manifest: dict[str, Any] | None) -> tuple[set[str], list[str]]:
    """``(files the library wrote and nobody changed since, files the manifest lists that were changed)``.

    Only a file the manifest lists *with a digest that still matches* is the library's: a manifest from an older
    release (no digests), a hand-edited one, or a file the user replaced under a listed name proves nothing, so those
    files are treated as the user's and never deleted.
    """
    if not manifest:
        return set(), []
    digests = manifest.get("digests")
    if not isinstance(digests, dict):
        return set(), []
    owned, changed = set(), []
    for rel, digest in digests.items():
        path = folder / rel
        if not isinstance(rel, str) or not _inside(folder, path) or path.is_symlink() or not path.is_file():
            continue
        if file_digest(path) == digest:
            owned.add(rel)
        else:
            changed.append(rel)
    return owned, sorted(changed)


def _inside(folder: Path, path: Path) -> bool:
    """Lexically inside: no ``..`` escape and no absolute part. Symlinks are not resolved, since the Hub cache
    links every file of a snapshot to a blob outside the snapshot's folder."""
    rel = os.path.normpath(os.path.relpath(os.path.abspath(path), os.path.abspath(folder)))
    return not (rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel))


def leaves_folder(rel: str) -> bool:
    """Whether a path spelled ``rel``, read relative to a folder, can point outside it, in any spelling: absolute
    (POSIX or a Windows drive), ``~``, a ``..`` part, Windows separators, or URL-encoding."""
    return (os.path.isabs(rel) or rel.startswith("~") or "\\" in rel or "%" in rel
            or bool(re.match(r"^[A-Za-z]:", rel)) or ".." in Path(rel).parts)


def path_inside(folder: Path, rel: Any, what: str) -> Path:
    """``folder / rel`` for a relative path read from a saved config, refusing one that leaves ``folder``.

    A saved folder (one pulled from the Hub included) is data, not instructions: ``../x`` or an absolute path
    would make a load read whatever lies there.
    """
    if not isinstance(rel, str) or not rel:
        raise ComponentLoadError(f"{folder}: {what} is {rel!r}; expected a relative path inside the folder.")
    path = folder / rel
    if leaves_folder(rel) or not _inside(folder, path):
        raise ComponentLoadError(f"{folder}: {what} is {rel!r}, which points outside the folder; refusing to load "
                                 f"from there. A saved folder only refers to files inside itself.")
    return path


def folder_inside(folder: Path, rel: Any, what: str) -> Path:
    """`path_inside`, and the real location too: a symlinked folder inside ``folder`` that points elsewhere
    is refused (a pulled or hand-made folder could link ``model -> /home/you/private``). Files may still be links:
    the Hub cache links every file of a snapshot to a blob outside it."""
    path = path_inside(folder, rel, what)
    real, root = os.path.realpath(path), os.path.realpath(folder)
    if os.path.commonpath([real, root]) != root:
        raise ComponentLoadError(f"{folder}: {what} is {rel!r}, which is a link to a folder outside it; refusing to "
                                 f"load from there. A saved folder only refers to files inside itself.")
    return path


def is_pulled(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` lies in the Hub cache (downloaded, so its configs are someone else's data)."""
    from huggingface_hub import constants

    real, cache = os.path.realpath(folder), os.path.realpath(constants.HF_HUB_CACHE)
    return os.path.commonpath([real, cache]) == cache


def check_writable(target: str | os.PathLike, kind: str, *, overwrite: bool = False) -> Path:
    """Raise `FolderNotEmptyError` unless ``write_folder(target, kind)`` may write there; returns the real
    folder (a symlink is followed: the link stays and what it points to is written).

    Usable before a long job, so that a refused output folder is known before hours of work, not after.
    """
    target = Path(os.path.realpath(os.fspath(target)))
    if target.exists() and not target.is_dir():
        raise FolderNotEmptyError(f"{target} is a file; expected a folder (missing, empty, or a saved {kind}).")
    recover_folder(target)
    existing = _files(target) if target.is_dir() else []
    if not existing or overwrite:
        return target
    manifest = read_manifest(target)
    present_kind = folder_kind(target)
    _, changed = owned_files(target, manifest) if present_kind == kind else (set(), [])
    if present_kind == kind and not changed:
        return target
    if changed:
        what = f"a saved {kind} whose file(s) {changed[:3]} were changed since the library wrote them"
    elif present_kind:
        what = f"a saved {present_kind}"
    else:
        shown = ", ".join(existing[:5]) + (f" and {len(existing) - 5} more" if len(existing) > 5 else "")
        what = f"files the library did not write ({shown})"
    raise FolderNotEmptyError(
        f"{target} is not empty: it holds {what}. Refusing to write a {kind} there, so nothing of yours is "
        f"replaced; choose an empty or new folder, or pass overwrite=True (--overwrite on the command line; "
        f"other files are kept).")


#: The journal inside a finished temporary folder: written just before its files start moving into the target, so a
#: save interrupted after that point (a SIGKILL, a power cut) is completed by the next call instead of left half done.
_COMMIT = ".cfaug_commit.json"


def _crash_point(step: str) -> None:
    """Called between the file operations of a save; the fault-injection tests kill the process here."""


def _tmp_pattern(name: str) -> re.Pattern[str]:
    # ``.NAME.PID-RANDOM.tmp`` (this release) and ``.NAME.RANDOM.tmp`` / ``.NAME.RANDOM.old`` (earlier releases)
    return re.compile(rf"^\.{re.escape(name)}\.(?:(?P<pid>\d+)-)?[a-z0-9_]{{8}}\.(?P<suffix>tmp|old)$")


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, but owned by someone else
        return True
    return True


def recover_folder(target: str | os.PathLike) -> list[str]:
    """Finish or undo whatever an interrupted save left beside ``target``; returns what was done, in words.

    * a finished save whose journal was written (it died while moving files in) is completed;
    * a temporary folder without a journal (it died while writing) is removed: it holds only files the library
      wrote, and ``target`` was never touched;
    * a ``.NAME.XXXX.old`` folder left by an earlier release (which moved the whole folder aside while saving) gives
      every file of the user's back to ``target``; the library's own old files in it are dropped.

    Every save and every load of a local folder calls this first, so nothing is ever left half written.
    """
    target = Path(os.path.realpath(os.fspath(target)))
    parent, done = target.parent, []
    if not parent.is_dir():
        return done
    pattern = _tmp_pattern(target.name)
    for entry in sorted(parent.iterdir()):
        m = pattern.match(entry.name)
        if not m or not entry.is_dir() or entry.is_symlink():
            continue
        if m["suffix"] == "old":
            done.append(_restore_legacy(entry, target))
        elif (entry / _COMMIT).is_file():
            _commit(entry, target, json.loads((entry / _COMMIT).read_text()))
            done.append(f"completed an interrupted save of {target}")
        elif m["pid"] is None or not _pid_alive(int(m["pid"])):
            shutil.rmtree(entry, ignore_errors=True)
            done.append(f"removed an unfinished save of {target} ({entry.name})")
    for line in done:
        logger.warning("%s", line)
    return done


def _restore_legacy(old: Path, target: Path) -> str:
    """Put back the files an earlier release's interrupted save left in ``old/x`` (see `recover_folder`)."""
    inner = old / "x"
    if not inner.is_dir():
        shutil.rmtree(old, ignore_errors=True)
        return f"removed an empty leftover {old.name}"
    if not target.exists():  # it died between moving the folder aside and moving the new one in
        os.replace(inner, target)
        shutil.rmtree(old, ignore_errors=True)
        return f"restored {target} from {old.name}, where an interrupted save had moved it"
    ours, _ = owned_files(inner, read_manifest(inner))
    ours.update(_MANIFESTS)
    restored, kept = 0, []
    for rel in _files(inner):
        src, dst = inner / rel, target / rel
        if rel in ours:
            continue
        if dst.exists() or dst.is_symlink():
            kept.append(rel)
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, dst)
        restored += 1
    if kept:
        return (f"restored {restored} file(s) of yours to {target} from {old.name}; {len(kept)} other(s) "
                f"({kept[:3]}) are still in {old} because {target} now holds files of the same names")
    shutil.rmtree(old, ignore_errors=True)
    return f"restored {restored} file(s) of yours to {target} from {old.name}, where an interrupted save had left them"


def _commit(tmp: Path, target: Path, journal: dict[str, Any]) -> None:
    """Move a finished save from ``tmp`` into ``target``: idempotent, so a second run after a crash finishes it.

    The library's stale files (listed with their digests in the journal, deleted only if still unchanged) go
    first, then the new files one rename each, the manifest last: until the manifest lands, a load sees the
    journal beside the folder and completes the save before reading anything. A user's file is never moved.
    """
    remove = journal.get("remove") or {}
    for rel, digest in sorted(remove.items()):
        path = target / rel
        if path.is_file() and not path.is_symlink() and file_digest(path) == digest:
            path.unlink()
            _crash_point("remove")
            _prune_empty(path.parent, target)
    names = [f for f in _files(tmp) if f not in (*_MANIFESTS, _COMMIT)]
    for rel in names + [m for m in _MANIFESTS if (tmp / m).is_file()]:
        dst = target / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if dst.is_dir() and not dst.is_symlink():  # checked before the journal was written; an empty folder only
            dst.rmdir()
        os.replace(tmp / rel, dst)
        _crash_point("move")
    shutil.rmtree(tmp, ignore_errors=True)


def _prune_empty(folder: Path, root: Path) -> None:
    """Remove ``folder`` and its parents up to ``root`` while they are empty (left so by removing stale files)."""
    while folder != root and _inside(root, folder):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _conflicts(target: Path, new: list[str], ours: set[str]) -> list[str]:
    """New files whose place in ``target`` is taken by something that is not a file the library may replace:
    a folder of the user's where a file goes, or a file of the user's where a folder goes."""
    found = []
    for rel in new:
        path = target / rel
        if path.is_dir() and not path.is_symlink() and any(path.iterdir()):
            found.append(f"{rel} (a folder of yours where a file goes)")
            continue
        parts = Path(rel).parts
        for i in range(1, len(parts)):
            sub = "/".join(parts[:i])
            p = target / sub
            if (p.is_file() or p.is_symlink()) and not p.is_dir() and sub not in ours:
                found.append(f"{sub} (a file of yours where a folder goes)")
                break
    return found


@contextlib.contextmanager
def write_folder(target: str | os.PathLike, kind: str, *, overwrite: bool = False,
                 hidden_manifest: bool = False) -> Iterator[Path]:
    """Yield an empty temporary folder; when the block succeeds, its files move into ``target``.

    ``target`` may be missing, empty, or hold a saved object of the same ``kind`` (it is then replaced: files the
    library wrote there before, as its manifest's digests prove, and does not write now are removed; any other file
    is kept where it is). A non-empty folder of another kind, or one whose listed files were changed, raises
    `FolderNotEmptyError` unless ``overwrite=True``; even then only files with the same names as the new ones
    are replaced. A symlinked ``target`` is followed (the link is kept). If the block fails, ``target`` is left as
    it was. If the process dies while the files move in, the next save or load of ``target`` finishes the move
    (`recover_folder`); a user's file is never moved anywhere. ``hidden_manifest`` names the manifest
    ``.cfaug_manifest.json``, for folders of data files that a reader takes whole.

    Examples:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp()) / "out"
        >>> d.mkdir(); (d / "notes.txt").write_text("mine")
        4
        >>> with write_folder(d, "generator") as tmp:
        ...     pass
        Traceback (most recent call last):
        ...
        cfaug_hf.sharing.folders.FolderNotEmptyError: ...
    """
    # Checked under the lock only: another writer's commit in progress would look like a folder of someone else's.
    with folder_lock(target):
        yield from _write_folder(target, kind, overwrite, hidden_manifest)


def _write_folder(target: str | os.PathLike, kind: str, overwrite: bool, hidden_manifest: bool) -> Iterator[Path]:
    target = check_writable(target, kind, overwrite=overwrite)
    existing = _files(target) if target.is_dir() else []
    ours_before: set[str] = set()
    if existing and folder_kind(target) == kind:
        ours_before, _ = owned_files(target, read_manifest(target))
        ours_before.update(m for m in _MANIFESTS if (target / m).is_file())
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp", dir=target.parent))
    tmp.chmod(0o777 & ~_umask())  # mkdtemp makes it private; the finished folder follows the user's umask
    try:
        yield tmp
        _crash_point("written")
        manifest = HIDDEN_MANIFEST if hidden_manifest else MANIFEST
        written = [f for f in _files(tmp) if f not in _MANIFESTS]
        digests = {f: file_digest(tmp / f) for f in written if not (tmp / f).is_symlink()}
        (tmp / manifest).write_text(json.dumps({"kind": kind, "files": written, "digests": digests}, indent=2) + "\n")
        _crash_point("manifest")
        if not existing:  # missing or empty: the finished folder takes its place in one rename
            if target.is_dir():
                target.rmdir()
            os.replace(tmp, target)
            return
        new = set(written) | {manifest}
        clash = _conflicts(target, sorted(new), ours_before)
        if clash:
            raise FolderNotEmptyError(f"{target}: cannot write the {kind} without removing something of yours: "
                                      f"{'; '.join(clash[:3])}. Move it, or choose another folder.")
        remove = {rel: file_digest(target / rel) for rel in sorted(ours_before - new) if (target / rel).is_file()}
        journal = tmp / f"{_COMMIT}.part"
        journal.write_text(json.dumps({"target": os.fspath(target), "remove": remove}))
        os.replace(journal, tmp / _COMMIT)  # from here on the save is finished, now or by the next call
        _crash_point("journal")
        _commit(tmp, target, {"remove": remove})
    except BaseException:
        if not (tmp / _COMMIT).is_file():
            shutil.rmtree(tmp, ignore_errors=True)
        raise


def save_dataset(dataset: Any, folder: str | os.PathLike, *, overwrite: bool = False, **save_kwargs: Any) -> Path:
    """``dataset.save_to_disk(folder)`` under the rules of `write_folder`: a folder holding anything the
    library did not write (a dataset saved by other code included) is refused unless ``overwrite=True``, and the
    old files are replaced only once the new ones are complete."""
    with write_folder(folder, "dataset", overwrite=overwrite) as tmp:
        save_to_disk(dataset, tmp, **save_kwargs)
    return Path(os.path.realpath(os.fspath(folder)))


def save_to_disk(dataset: Any, folder: str | os.PathLike, **save_kwargs: Any) -> None:
    """``dataset.save_to_disk(folder)`` that ``load_from_disk`` can always read back, also with no rows.

    ``datasets`` sizes the shards by the rows of the underlying table, so a dataset whose table is empty (every row
    filtered out by a batched map, or built from no rows) is saved with no data file at all, and ``load_from_disk``
    then fails with a bare ``IndexError``. One shard is asked for in that case: an empty Arrow file keeps the
    columns and their types. A `datasets.DatasetDict` gets the same per split."""
    if "num_shards" not in save_kwargs and "max_shard_size" not in save_kwargs:
        if hasattr(dataset, "data") and hasattr(dataset, "select"):  # a Dataset
            if len(dataset.data) == 0:
                save_kwargs["num_shards"] = 1
        elif hasattr(dataset, "items"):  # a DatasetDict
            empty = {name: 1 for name, split in dataset.items() if len(split.data) == 0}
            if empty:
                save_kwargs["num_shards"] = {name: empty.get(name) for name in dataset}
    dataset.save_to_disk(os.fspath(folder), **save_kwargs)


def check_manifest(folder: Path, what: str) -> None:
    """Raise `ComponentLoadError` naming the first file the manifest lists that is gone."""
    manifest = read_manifest(folder)
    if manifest is None:
        return
    missing = [f for f in manifest["files"] if not path_inside(folder, f, f"{MANIFEST} entry").is_file()]
    if missing:
        raise ComponentLoadError(f"{folder} is an incomplete saved {what}: {missing[0]!r} is missing"
                                 + (f" (and {len(missing) - 1} more file(s))" if len(missing) > 1 else "")
                                 + ". Save it again, or pull it again from the Hub.")
    digests = manifest.get("digests")
    if isinstance(digests, dict):
        # Small files only (configs, tokenizers, adapters): weights are checked by their header and keys, and
        # hashing hundreds of MB at every load would double its time. A change is worth a warning, not a refusal:
        # editing a saved config by hand is legitimate.
        for rel, digest in digests.items():
            path = path_inside(folder, rel, f"{MANIFEST} entry")
            if path.is_file() and path.stat().st_size <= _DIGEST_CHECK_BYTES and file_digest(path) != digest:
                logger.warning("%s was changed since it was saved (its digest differs from %s); if the %s fails "
                               "to load or behaves oddly, save or download it again.", path, MANIFEST, what)


def check_weight_files(folder: Path, what: str) -> None:
    """Refuse pickled weights and damaged safetensors files before any loader touches them.

    Nothing is ever unpickled: a folder whose weights exist only as ``pytorch_model.bin`` (or ``.pt``) is refused
    with the two lines that convert it.
    """
    safetensors = sorted(folder.glob("*.safetensors"))
    pickles = sorted(p for p in folder.iterdir() if p.suffix in _PICKLE_SUFFIXES and p.is_file())
    if pickles and not safetensors:
        raise ComponentLoadError(
            f"{folder} holds pickled weights ({pickles[0].name}); cfaug_hf loads safetensors only, since unpickling "
            f"can run arbitrary code. If you trust the file, convert it once: "
            f"`m = AutoModel.from_pretrained({os.fspath(folder)!r}); m.save_pretrained(same_folder)` "
            f"(writes model.safetensors), then delete {pickles[0].name}.")
    from safetensors import safe_open

    for path in safetensors:
        try:
            with safe_open(os.fspath(path), framework="pt") as f:
                f.keys()
        except Exception as err:  # SafetensorError has no public base class to name here
            raise ComponentLoadError(f"{path} is not a readable safetensors file ({err}); the {what} in {folder} "
                                     f"is damaged or was truncated. Save or download it again.") from None


def check_json_files(folder: Path, what: str) -> None:
    """Refuse a folder whose JSON files (model config, tokenizer, ...) do not parse, naming the file and the place,
    before a loader fails on it with an error that names neither. A file whose bytes match the digest the
    library's manifest recorded when it wrote it is the valid file it wrote, and is not parsed again (a tokenizer
    file is megabytes of JSON: parsing it twice cost a third of a shipped editor's load)."""
    manifest = read_manifest(folder) or {}
    digests = manifest.get("digests") if isinstance(manifest.get("digests"), dict) else {}
    for path in sorted(folder.rglob("*.json")):
        rel = path.relative_to(folder).as_posix()
        if rel in digests and path.stat().st_size <= _DIGEST_CHECK_BYTES and file_digest(path) == digests[rel]:
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):  # every config, tokenizer and manifest file holds one object
                raise ComponentLoadError(f"{path} holds a JSON {type(data).__name__}, not an object; the {what} in "
                                         f"{folder} is damaged. Save or download it again.")
        except UnicodeDecodeError:
            raise ComponentLoadError(f"{path} is not UTF-8 text; the {what} in {folder} is damaged. Save or "
                                     f"download it again.") from None
        except json.JSONDecodeError as err:
            raise ComponentLoadError(f"{path} is not valid JSON (line {err.lineno}, column {err.colno}: {err.msg}); "
                                     f"the {what} in {folder} is damaged. Save or download it again.") from None


def read_versioned_json(path: Path, expected_type: str, what: str) -> dict[str, Any]:
    """Read a saved config, refusing a missing file, another kind of object or a newer format version."""
    folder = path.parent
    if not path.is_file():
        found = folder_kind(folder)
        hint = f" It holds a saved {found}." if found else ""
        raise ComponentLoadError(f"{folder} is not a saved {what}: {path.name} is missing.{hint}")
    try:
        config = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ComponentLoadError(f"{path} is not valid JSON: {err}.") from None
    if not isinstance(config, dict) or config.get("component_type") != expected_type:
        found = config.get("component_type") if isinstance(config, dict) else type(config).__name__
        raise ComponentLoadError(f"{folder} holds a {found!r}, not a {expected_type!r}.")
    version = config.get("format_version", 0)
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ComponentLoadError(
            f"{folder} was saved with format_version {version} (cfaug_hf {config.get('cfaug_hf_version')}); "
            f"this cfaug_hf reads format_version <= {FORMAT_VERSION}. Upgrade cfaug-hf to load it.")
    check_manifest(folder, what)
    return config
