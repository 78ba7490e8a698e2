"""Worker processes of ``map(num_proc=...)``: they end when their parent dies, and temporary files a killed map left
behind are cleaned up. Nothing here changes what an augmenter outputs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any
from .verbosity import get_logger

__all__ = ["enter_worker_process", "watching_forks", "remove_stale_temp_files"]

logger = get_logger(__name__)


def enter_worker_process() -> None:
    """First call in a ``map(num_proc=...)`` worker: use one torch thread, and exit if the parent dies.

    Workers are forked from a parent whose OpenMP thread pool (GNU libgomp) may already be running; the first
    multi-threaded torch op in the child then waits forever for threads that were not forked. One thread per
    worker avoids that, and is what ``num_proc`` workers should use anyway (the workers are the parallelism).
    A worker whose parent was killed (SIGKILL, OOM killer) would otherwise keep generating for nobody.
    """
    _exit_with_parent()
    if "torch" in sys.modules:
        import torch

        torch.set_num_threads(1)


@contextlib.contextmanager
def watching_forks() -> Iterator[None]:
    """Inside the block, every process forked from this one watches for its parent's death (see ``_WATCH_FORKS``)."""
    global _WATCH_FORKS
    _WATCH_FORKS = True
    try:
        yield
    finally:
        _WATCH_FORKS = False


_WATCHING_PID: int | None = None


def _exit_with_parent() -> None:
    """In a worker process: end the process once its parent is gone, and the siblings left behind with it.

    A daemon thread polls for the parent's death. A pool worker may also leave first, on its own, when the dead
    parent's pipe closes; a finalizer then does the same clean-up on its way out. Siblings are the processes that
    run our command line and were started by our parent (``/proc`` tells): ``datasets`` runs a ``multiprocess``
    Manager server beside the workers, which would otherwise outlive a killed parent.
    """
    import threading
    import time

    global _WATCHING_PID
    if _WATCHING_PID == os.getpid():  # already watching (started at fork, then again at the first batch)
        return
    _WATCHING_PID = os.getpid()
    parent = os.getppid()
    own = _cmdline(os.getpid())
    parent_start = _start_time(parent)
    siblings: dict[int, str] = {}

    def look_around() -> None:
        # Forked siblings share our command line; anything else the parent started is none of our business.
        siblings.update({pid: start for pid, start in _children_of(parent).items()
                         if pid != os.getpid() and _cmdline(pid) == own})

    def end_orphaned_siblings() -> None:
        if os.getppid() == parent:
            return
        # Re-parented siblings now share our new parent: also end those of our command line that started after
        # our parent did (one forked after our last look).
        for pid, start in _children_of(os.getppid()).items():
            if (pid != os.getpid() and _cmdline(pid) == own and parent_start is not None
                    and int(start) >= int(parent_start)):
                siblings.setdefault(pid, start)
        for pid, start in siblings.items():
            if _start_time(pid) == start:  # the same process, not a new one that reused the pid
                with contextlib.suppress(ProcessLookupError, PermissionError):  # it may have ended by itself
                    os.kill(pid, signal.SIGTERM)

    def watch() -> None:
        polls = 0
        while True:
            time.sleep(0.5)
            polls += 1
            if os.getppid() != parent:
                end_orphaned_siblings()
                os._exit(1)
            if polls % 4 == 0:
                look_around()  # a sibling started after us (a replaced pool worker, a Manager) is seen too

    look_around()
    threading.Thread(target=watch, name="cfaug-parent-watch", daemon=True).start()
    for name in ("multiprocess.util", "multiprocessing.util"):  # run on a worker's normal exit path too
        util = sys.modules.get(name)
        if util is not None:
            util.Finalize(None, end_orphaned_siblings, exitpriority=100)


#: While set (inside `Augmenter.augment`), every process forked from this one watches for its parent's death:
#: that covers the ``multiprocess`` Manager server that ``datasets`` forks beside its workers, which never runs our
#: code. Outside ``augment()`` forks are left alone (a daemon that double-forks must outlive its parent).
_WATCH_FORKS = False


def _after_fork_in_child() -> None:
    if _WATCH_FORKS:
        _exit_with_parent()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _cmdline(pid: int) -> bytes | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _children_of(parent: int) -> dict[int, str]:
    """``{pid: start time}`` of the processes whose parent is ``parent``; empty without ``/proc``."""
    found: dict[int, str] = {}
    if not os.path.isdir("/proc/self"):
        return found
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            found[int(entry)] = fields[19]
    return found


def remove_stale_temp_files(dataset: Any, *, min_age_s: float = 60.0) -> list[str]:
    """Delete ``tmp*`` files that a killed ``map`` left in ``dataset``'s cache folder; returns their paths.

    ``datasets`` writes a map's output to a temporary file and renames it when done; a map killed with SIGKILL
    leaves the temporary file behind forever. A file is removed only when it is older than ``min_age_s`` and, where
    ``/proc`` can tell, no process has it open (so a map running in another process is never disturbed).
    """
    folders = {os.path.dirname(f["filename"]) for f in getattr(dataset, "cache_files", []) or []}
    return remove_stale_temp_files_in(*folders, min_age_s=min_age_s)


def remove_stale_temp_files_in(*folders: str | os.PathLike, min_age_s: float = 60.0) -> list[str]:
    """`remove_stale_temp_files` for given folders (a checkpoint folder of `Augmenter.augment`)."""
    import time

    candidates = [os.path.join(d, n) for d in folders if os.path.isdir(d) for n in os.listdir(d)
                  if n.startswith("tmp")]
    now = time.time()
    candidates = [p for p in candidates if os.path.isfile(p) and now - os.path.getmtime(p) >= min_age_s]
    if not candidates:
        return []
    open_files = _open_files()
    removed = []
    for path in candidates:
        if open_files is not None and os.path.realpath(path) in open_files:
            continue
        if open_files is None and now - os.path.getmtime(path) < 24 * 3600:
            continue  # without /proc, only a day-old file is surely abandoned
        try:
            os.remove(path)
        except OSError as err:  # gone already, or not ours to remove: leave it and say so
            logger.debug("Could not remove %s: %s", path, err)
            continue
        removed.append(path)
    if removed:
        logger.info("Removed %d temporary file(s) left by an interrupted map: %s", len(removed), removed)
    return removed


def _open_files() -> set[str] | None:
    if not os.path.isdir("/proc/self/fd"):
        return None
    found = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    found.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
                except OSError:
                    continue
        except OSError:
            continue
    return found
