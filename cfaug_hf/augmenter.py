"""The augmenter contract shared by every method.

An augmenter is a picklable callable for ``dataset.map(augmenter, batched=True)``. Given a batch it returns, for each
input row in order, the row itself (unless ``keep_original=False``) followed by that row's counterfactuals, with every
input column re-emitted and these provenance columns added:

=========================  ================  ==========================================================================
column                     type              meaning
=========================  ================  ==========================================================================
``cf_is_counterfactual``   bool              False for the original row, True for a generated one
``cf_method``              string            the method that made the row (``"crossaug"``, ...); ``""`` on originals
``cf_kind``                string            ``"original"`` or the method's kind of counterfactual (e.g. ``"c'+e"``)
``cf_source_id``           string            the source row's id column, or a digest of its texts and label
``cf_original_label``      string            the source row's label name
``cf_edit``                string            JSON description of the edit (``""`` on originals)
``cf_outcome``             list of string    everything that happened to the source row (shared by its whole group)
=========================  ================  ==========================================================================

``cf_outcome`` makes the statistics recoverable from the output alone (after a cache hit or with ``num_proc``):
:meth:`AugmentationStats.from_dataset`. Every input row is accounted for: it produced counterfactuals or was skipped
with a reason.

Determinism: a row's output depends only on the augmenter (config, seed, components) and the row, never on the batch
size, ``num_proc`` or the row's position, because each row gets its own seed derived from its source id.
"""

from __future__ import annotations

import abc
import contextlib
import copy
import dataclasses
import json
import logging
import os
import signal
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, ClassVar

from . import registry
from .fingerprint import digest_json, digest_object, register_cheap_hash, row_seed
from .schema import SchemaError, TaskSchema

__all__ = [
    "Augmenter", "AugmenterConfig", "AugmentationError", "Counterfactual", "Example", "RowResult", "AugmentationStats",
    "PROVENANCE_COLUMNS", "provenance_features", "auto_batch_size",
]

logger = logging.getLogger(__name__)

#: File that marks a saved augmenter folder.
AUGMENTER_CONFIG = "cfaug_augmenter.json"

#: ``cf_kind`` of the rows :meth:`Augmenter.augment` maps only to carry an outcome, then removes.
TRACE_KIND = "trace"

PROVENANCE_COLUMNS = ("cf_is_counterfactual", "cf_method", "cf_kind", "cf_source_id", "cf_original_label", "cf_edit",
                      "cf_outcome")


def provenance_features() -> dict[str, Any]:
    """The ``datasets`` feature types of the provenance columns."""
    from datasets import Value

    try:
        from datasets import List
        outcome = List(Value("string"))
    except ImportError:  # pragma: no cover
        from datasets import Sequence as List
        outcome = List(Value("string"))
    return {
        "cf_is_counterfactual": Value("bool"), "cf_method": Value("string"), "cf_kind": Value("string"),
        "cf_source_id": Value("string"), "cf_original_label": Value("string"), "cf_edit": Value("string"),
        "cf_outcome": outcome,
    }


@dataclass
class AugmenterConfig:
    """Options every augmenter has. Method configs subclass this and add their own fields with ``help`` metadata."""

    keep_original: bool = field(default=True, metadata={
        "help": "Emit each input row before its counterfactuals. False returns counterfactuals only."})
    seed: int = field(default=0, metadata={
        "help": "Seed for any randomness; each row's own seed is derived from this and the row's source id."})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "config") -> AugmenterConfig:
        """Build the config from a dict (a saved ``cfaug_augmenter.json``'s ``config``), refusing unknown fields
        and values of the wrong type with an error naming ``where`` and the field."""
        from .configs import config_from_dict

        return config_from_dict(cls, data, where)

    @classmethod
    def help(cls) -> dict[str, str]:
        """Each field's help text, for ``--help`` and cards."""
        return {f.name: f.metadata.get("help", "") for f in dataclasses.fields(cls)}


class Example:
    """One input row as an augmenter sees it: its ``values`` (column -> cell), canonical ``label`` name,
    ``source_id``, position ``index`` in the dataset (when known) and ``seed``.

    ``seed`` is derived from the augmenter's seed and the source id on first use only, since most methods never
    sample.
    """

    __slots__ = ("values", "label", "source_id", "index", "_seed", "_base_seed")

    def __init__(self, values: dict[str, Any], label: str, source_id: str, seed: int | None = None,
                 index: int | None = None, *, base_seed: int = 0) -> None:
        self.values, self.label, self.source_id, self.index = values, label, source_id, index
        self._seed, self._base_seed = seed, base_seed

    @property
    def seed(self) -> int:
        if self._seed is None:
            self._seed = row_seed(self._base_seed, self.source_id)
        return self._seed

    def __getitem__(self, column: str) -> Any:
        return self.values[column]

    def __repr__(self) -> str:
        return f"Example(source_id={self.source_id!r}, label={self.label!r}, values={self.values!r})"


@dataclass
class Counterfactual:
    """A generated row: the new values of the edited columns, its label name, its kind and an edit description."""

    values: dict[str, Any]
    label: str
    kind: str
    edit: dict[str, Any] = field(default_factory=dict)


@dataclass
class RowResult:
    """What an augmenter made of one input row: counterfactuals and events (``produced:...``, ``skipped:...``).

    ``keep_original=False`` drops the input row from the output even when the config keeps originals (a method
    that, like CrossAug, leaves NOT ENOUGH INFO rows out); say why in ``events``.
    """

    counterfactuals: list[Counterfactual] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    keep_original: bool = True


@dataclass
class AugmentationStats:
    """Counts of what an augmentation did, by event.

    Events are strings such as ``produced:c'+e``, ``skipped:same_claim`` or ``no_evidence_edit:span_not_found``.
    ``rows_in`` counts input rows; ``rows_out`` output rows.

    Example:
        >>> s = AugmentationStats()
        >>> s.add_row(["produced:c'+e", "no_evidence_edit:insertion"], n_out=2)
        >>> s.produced, s.by_prefix("no_evidence_edit")
        ({"c'+e": 1}, {'insertion': 1})
    """

    rows_in: int = 0
    rows_out: int = 0
    events: Counter = field(default_factory=Counter)

    def add_row(self, events: Sequence[str], n_out: int) -> None:
        self.rows_in += 1
        self.rows_out += n_out
        self.events.update(events)

    def merge(self, other: AugmentationStats) -> None:
        self.rows_in += other.rows_in
        self.rows_out += other.rows_out
        self.events.update(other.events)

    def by_prefix(self, prefix: str) -> dict[str, int]:
        p = prefix + ":"
        return {k[len(p):]: v for k, v in sorted(self.events.items()) if k.startswith(p)}

    @property
    def produced(self) -> dict[str, int]:
        return self.by_prefix("produced")

    @property
    def skipped(self) -> dict[str, int]:
        return self.by_prefix("skipped")

    @property
    def counterfactuals(self) -> int:
        return sum(self.produced.values())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rows_in": self.rows_in, "rows_out": self.rows_out,
                               "counterfactuals": self.counterfactuals}
        groups: dict[str, dict[str, int]] = {}
        for key, n in sorted(self.events.items()):
            head, _, tail = key.partition(":")
            groups.setdefault(head, {})[tail or head] = n
        out.update(groups)
        return out

    @classmethod
    def from_dataset(cls, dataset: Any, rows_in: int | None = None) -> AugmentationStats:
        """Recover the statistics from an augmented dataset's provenance columns, whatever the order of its rows.

        Each input row leaves one non-counterfactual row (its original, or the trace row of
        :meth:`Augmenter.augment`) that carries its outcome, so counting those is exact after a shuffle, a
        ``select`` or with duplicate ids. Counterfactuals whose source left no such row (``keep_original=False`` in
        a plain ``map``) are grouped by source id and outcome; rows that left nothing at all are counted as
        ``skipped:untraced`` when the number of input rows ``rows_in`` is given. Use :meth:`Augmenter.augment` to
        get every reason.
        """
        needed = ("cf_is_counterfactual", "cf_kind", "cf_source_id", "cf_outcome")
        missing = [c for c in needed if c not in dataset.column_names]
        if missing:
            raise SchemaError(f"Columns {missing} are missing: this is not the output of a cfaug_hf augmenter.")
        stats = cls()
        traced: set[str] = set()
        orphans: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for batch in dataset.select_columns(list(needed)).iter(batch_size=1000):
            for is_cf, kind, sid, outcome in zip(batch["cf_is_counterfactual"], batch["cf_kind"],
                                                 batch["cf_source_id"], batch["cf_outcome"]):
                stats.rows_out += kind != TRACE_KIND
                if not is_cf:
                    stats.rows_in += 1
                    stats.events.update(outcome)
                    traced.add(sid)
                else:
                    orphans.setdefault((sid, tuple(outcome)), list(outcome))
        for (sid, _), outcome in orphans.items():
            if sid not in traced:
                stats.rows_in += 1
                stats.events.update(outcome)
        if rows_in is not None and rows_in > stats.rows_in:
            stats.events["skipped:untraced"] += rows_in - stats.rows_in
            stats.rows_in = rows_in
        return stats

    def summary_lines(self) -> list[str]:
        lines = [f"rows in: {self.rows_in}", f"rows out: {self.rows_out} "
                 f"({self.rows_out - self.counterfactuals} original, {self.counterfactuals} counterfactual)"]
        for kind, n in self.produced.items():
            lines.append(f"  counterfactual {kind}: {n}")
        for head in sorted({k.partition(":")[0] for k in self.events} - {"produced"}):
            for reason, n in self.by_prefix(head).items():
                lines.append(f"  {head} {reason}: {n}")
        return lines



class AugmentationError(RuntimeError):
    """A method (its generator, LLM or other callable) failed on a batch; the message names the batch's rows and
    the original error is chained as ``__cause__``."""


def _batch_failure(name: str, examples: Sequence[Example], err: BaseException | None) -> str:
    where = [f"row {ex.index}" if ex.index is not None else f"source id {ex.source_id!r}" for ex in examples[:5]]
    more = f" and {len(examples) - 5} more" if len(examples) > 5 else ""
    head = f"{name} failed on a batch of {len(examples)} row(s) ({', '.join(where)}{more})"
    if err is None:
        return head + "."
    return (f"{head}: {type(err).__name__}: {err}. Nothing was written for this map; fix the component (or drop "
            f"these rows) and run again.")


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _raised_by_us(err: BaseException) -> bool:
    """True when the innermost frame of ``err``'s traceback is this package's code (not a component's model call,
    a user's callable or a dependency)."""
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep) \
        and isinstance(err, (TypeError, ValueError))


def _refuse_augmented(columns: Sequence[str]) -> None:
    present = [c for c in PROVENANCE_COLUMNS if c in columns]
    if present:
        raise SchemaError(
            f"Column {present[0]!r} is present: this dataset is already the output of an augmenter. Augmenting it "
            f"again would treat counterfactuals as originals and overwrite their provenance. Augment the original "
            f"data, or select the originals first: ds.filter(lambda cf: not cf, input_columns='cf_is_counterfactual')"
            f".remove_columns({list(PROVENANCE_COLUMNS)}).")


_CODE_DIGESTS: dict[type, str] = {}


def code_digest(cls: type) -> str:
    """A digest of the source of ``cls`` and its bases, so editing a method invalidates ``datasets``' cache.

    ``datasets`` fingerprints plain functions by their code; an augmenter is fingerprinted by its config and
    weights, and without this a user who edits ``augment_examples`` would get the old rows back from the cache.
    Classes whose source cannot be read (defined in a REPL) fall back to their methods' bytecode and constants.
    """
    cached = _CODE_DIGESTS.get(cls)
    if cached is not None:
        return cached
    import inspect

    parts = []
    for klass in cls.__mro__:
        if klass.__module__ in ("builtins", "abc", "typing"):
            continue
        try:
            parts.append(inspect.getsource(klass))
        except (OSError, TypeError):
            for name, value in sorted(vars(klass).items()):
                func = getattr(value, "__func__", getattr(value, "fget", value))
                code = getattr(func, "__code__", None)
                if code is not None:
                    parts.append(f"{name}:{_code_repr(code)}")
    digest = digest_json(parts)
    _CODE_DIGESTS[cls] = digest
    return digest


def _code_repr(code: Any) -> str:
    consts = [_code_repr(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts]
    return f"{code.co_code.hex()}|{consts}|{code.co_names}"


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


#: While set (inside :meth:`Augmenter.augment`), every process forked from this one watches for its parent's death:
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
    import time

    folders = {os.path.dirname(f["filename"]) for f in getattr(dataset, "cache_files", []) or []}
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


def auto_batch_size(rows: int) -> int:
    """The map batch size :meth:`Augmenter.augment` uses by default: ``rows // 100`` clipped to 32..1000.

    Small batches make the progress bar move with a slow generator; large ones matter at scale, because every map
    batch becomes its own Arrow record batch and opening an output of many tiny record batches costs memory (1M
    rows in batches of 32: 2.15 GiB peak RSS against 1.08 GiB in batches of 1000; see benchmarks/pipeline_overhead.py).

    >>> auto_batch_size(500), auto_batch_size(10_000), auto_batch_size(1_000_000)
    (32, 100, 1000)
    """
    return max(32, min(1000, rows // 100))


def source_id(row: Mapping[str, Any], schema: TaskSchema) -> str:
    """The ``cf_source_id`` an augmenter gives ``row``: its id column, else a digest of its texts and label."""
    if schema.id_column and row.get(schema.id_column) is not None:
        return str(row[schema.id_column])
    return digest_json([row[c] for c in schema.text_columns] + [schema.row_label(row[schema.label_column])])


class Augmenter(abc.ABC):
    """Base class of all augmenters: validation, provenance, per-row seeds, statistics and fingerprinting.

    Subclasses set ``method``, ``config_class`` and ``citation`` and implement :meth:`augment_examples`, which gets a
    whole batch of :class:`Example` objects (so models run batched) and returns one :class:`RowResult` per example.

    Example:
        >>> from datasets import Dataset
        >>> class Negate(Augmenter):
        ...     method = "negate"
        ...     def augment_examples(self, examples):
        ...         return [RowResult([Counterfactual({"text": "not " + ex["text"]},
        ...                                           "negative" if ex.label == "positive" else "positive", "negated")],
        ...                           ["produced:negated"]) for ex in examples]
        >>> ds = Dataset.from_dict({"text": ["good film"], "label": ["positive"]})
        >>> out = ds.map(Negate(TaskSchema.sentiment()), batched=True)
        >>> list(out["text"]), list(out["label"]), list(out["cf_kind"])
        (['good film', 'not good film'], ['positive', 'negative'], ['original', 'negated'])
    """

    method: ClassVar[str] = ""
    config_class: ClassVar[type[AugmenterConfig]] = AugmenterConfig
    citation: ClassVar[str] = ""
    #: Set on the copy that :meth:`augment` maps: rows the output would leave out are emitted as trace rows.
    _trace: bool = False

    def __init__(self, schema: TaskSchema, config: AugmenterConfig | None = None, *,
                 filters: Sequence[Any] | None = None, **overrides: Any) -> None:
        if not isinstance(schema, TaskSchema):
            raise TypeError(f"schema must be a TaskSchema, got {type(schema).__name__}.")
        config = config if config is not None else self.config_class()
        if not isinstance(config, self.config_class):
            raise TypeError(f"{type(self).__name__} takes a {self.config_class.__name__}, got {type(config).__name__}.")
        if overrides:
            config = dataclasses.replace(config, **overrides)
        self.schema = schema
        self.config = config
        self.filters = list(filters or [])
        for f in self.filters:
            if not (hasattr(f, "keep") and hasattr(f, "name")):
                raise TypeError(f"filters must be cfaug_hf.filters.Filter objects, got {type(f).__name__}.")
        self.stats = AugmentationStats()
        self._pid = os.getpid()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_cheap_hash([cls])
        registry.register_augmenter(cls)

    def fit(self, dataset: Any) -> Augmenter:
        """Prepare for a ``dataset`` before it is mapped; returns ``self``.

        Most methods edit one row at a time and need nothing (this default does nothing). Methods whose output for a
        row depends on the whole dataset (ICDA's rationale pools and donors) override it; the callbacks call it
        before each epoch's regeneration.
        """
        return self

    # ------------------------------------------------------------------------------------------- the map contract
    @abc.abstractmethod
    def augment_examples(self, examples: list[Example]) -> list[RowResult]:
        """Produce the counterfactuals of a batch of examples, one :class:`RowResult` per example, in order."""

    def __call__(self, batch: Mapping[str, Sequence[Any]], indices: Sequence[int] | None = None) -> dict[str, list]:
        if getattr(self, "_pid", None) != os.getpid():
            self._enter_worker_process()
        label_values = batch.get(self.schema.label_column) if hasattr(batch, "get") else None
        one_row = isinstance(label_values, (str, int, float)) or (label_values is not None
                                                                  and not hasattr(label_values, "__len__"))
        if self.schema.is_token_level and label_values is not None and len(label_values):
            one_row = not isinstance(label_values[0], (list, tuple))  # one row's tags, not a batch of tag lists
        if one_row:
            raise TypeError(f"{type(self).__name__} got one row ({self.schema.label_column}={label_values!r}) "
                            f"instead of a batch: call dataset.map(augmenter, batched=True).")
        _refuse_augmented(list(batch.keys()))
        if self.schema.id_column and self.schema.id_column not in batch:
            raise SchemaError(f"Column {self.schema.id_column!r} (the schema's id_column) is missing; the batch has "
                              f"columns {list(batch.keys())}.")
        labels = self.schema.batch_labels(batch, indices)
        columns = list(batch.keys())
        n = len(labels)
        rows = [{c: batch[c][i] for c in columns} for i in range(n)]
        examples = [Example(row, labels[i], source_id(row, self.schema), None,
                            None if indices is None else indices[i], base_seed=self.config.seed)
                    for i, row in enumerate(rows)]
        try:
            results = self.augment_examples(examples) if examples else []
        except SchemaError:
            raise
        except Exception as err:
            if _raised_by_us(err):  # our own check of a component's output: its message already says what is wrong
                if hasattr(err, "add_note"):
                    err.add_note(_batch_failure(type(self).__name__, examples, None))
                raise
            raise AugmentationError(_batch_failure(type(self).__name__, examples, err)) from err
        if len(results) != len(examples):
            raise RuntimeError(f"{type(self).__name__}.augment_examples returned {len(results)} results for "
                               f"{len(examples)} examples.")
        if self.filters:
            self.apply_filters(examples, results)
        out: dict[str, list] = {c: [] for c in (*columns, *PROVENANCE_COLUMNS)}
        label_col = self.schema.label_column
        for row, ex, res in zip(rows, examples, results):
            outcome = list(res.events)
            if not any(e.startswith(("produced:", "skipped:")) for e in outcome):
                outcome.append("skipped:no_counterfactual")
            emitted = 0
            if self.config.keep_original and res.keep_original:
                self._emit(out, row, columns, False, "", "original", ex, "", outcome)
                emitted += 1
            elif self._trace:  # augment(): every source row leaves its outcome; removed after the map
                self._emit(out, row, columns, False, "", TRACE_KIND, ex, "", outcome)
            for cf in res.counterfactuals:
                new = dict(row)
                for col, value in cf.values.items():
                    if col not in row:
                        raise RuntimeError(f"{type(self).__name__} edited unknown column {col!r}.")
                    new[col] = value
                new[label_col] = self.schema.encode_label_like(cf.label, row[label_col])
                self._emit(out, new, columns, True, self.method, cf.kind, ex,
                           json.dumps(cf.edit, ensure_ascii=False, sort_keys=True), outcome)
                emitted += 1
            self.stats.add_row(outcome, emitted)
        return out

    def apply_filters(self, examples: list[Example], results: list[RowResult]) -> None:
        """Run the filter stack over a batch's counterfactuals, in order; a dropped one leaves ``filtered:<name>``
        in its row's events (and ``skipped:all_filtered`` when none of the row's counterfactuals is left)."""
        from .filters import Pair

        had = [bool(res.counterfactuals) for res in results]
        for f in self.filters:
            flat = [(g, res, cf) for g, (ex, res) in enumerate(zip(examples, results)) for cf in res.counterfactuals]
            if not flat:
                break
            pairs = [Pair(examples[g].values, {**examples[g].values, **cf.values}, cf.label, examples[g].label,
                          tuple(cf.values), self.schema.text_columns, g) for g, _, cf in flat]
            keep, scores = f.keep(pairs)
            reasons = f.reasons if f.reasons is not None and len(f.reasons) == len(flat) else [None] * len(flat)
            for (g, res, cf), ok, score, reason in zip(flat, keep, scores, reasons):
                cf.edit.setdefault("filter_scores", {})[f.name] = round(float(score), 4)
                if not ok:
                    res.counterfactuals.remove(cf)
                    res.events.remove(f"produced:{cf.kind}")
                    res.events.append(f"filtered:{f.name}")
                    if reason:
                        res.events.append(f"{f.name}:{reason}")
        for before, res in zip(had, results):
            if before and not res.counterfactuals:
                res.events.append("skipped:all_filtered")

    def _enter_worker_process(self) -> None:
        """First call in a ``map(num_proc=...)`` worker: use one torch thread, and exit if the parent dies.

        Workers are forked from a parent whose OpenMP thread pool (GNU libgomp) may already be running; the first
        multi-threaded torch op in the child then waits forever for threads that were not forked. One thread per
        worker avoids that, and is what ``num_proc`` workers should use anyway (the workers are the parallelism).
        A worker whose parent was killed (SIGKILL, OOM killer) would otherwise keep generating for nobody.
        """
        self._pid = os.getpid()
        _exit_with_parent()
        if "torch" in sys.modules:
            import torch

            torch.set_num_threads(1)

    def _emit(self, out: dict[str, list], row: Mapping[str, Any], columns: Sequence[str], is_cf: bool, method: str,
              kind: str, ex: Example, edit: str, outcome: list[str]) -> None:
        for c in columns:
            out[c].append(row[c])
        out["cf_is_counterfactual"].append(is_cf)
        out["cf_method"].append(method)
        out["cf_kind"].append(kind)
        out["cf_source_id"].append(ex.source_id)
        out["cf_original_label"].append(ex.label)
        out["cf_edit"].append(edit)
        out["cf_outcome"].append(outcome)

    # ------------------------------------------------------------------------------------------------ conveniences
    def output_features(self, features: Any) -> Any:
        """The features of the augmented dataset given the input's (pass as ``map(features=...)`` if you like)."""
        from datasets import Features

        kept = {k: v for k, v in features.items() if k not in PROVENANCE_COLUMNS}
        return Features({**kept, **provenance_features()})

    def augment(self, dataset: Any, *, batch_size: int | None = None, num_proc: int | None = None,
                desc: str | None = None, **map_kwargs: Any) -> Any:
        """Validate ``dataset`` against the schema, run ``dataset.map(self, batched=True)`` and set ``self.stats``.

        Same output as calling ``map`` yourself; in addition:

        * ``batch_size`` (rows per map batch) defaults to about a hundredth of the dataset, between 32 and 1000
          (see :func:`auto_batch_size`): the progress bar moves about a hundred times whatever the size, and a
          million rows become a thousand Arrow record batches instead of 31,250, which keeps peak memory flat.
          Models still run in their own batches (``Generator`` config ``batch_size``);

        * column and type errors are raised before any row is read (for a ``DatasetDict``, in every split before
          any split is augmented, naming the split), and row errors name the row's index in the dataset;
        * ``self.stats`` holds exactly this call's counts, also after a cache hit, with ``num_proc``, and with
          ``keep_original=False`` (the map keeps the originals as a trace, and they are filtered out after);
        * a pandas ``DataFrame`` is accepted (converted with ``Dataset.from_pandas``), and an ``IterableDataset``
          is mapped lazily (``self.stats`` then counts rows as they are read);
        * temporary files left in the dataset's cache folder by an earlier map that was killed are removed.
        """
        from datasets import Dataset, DatasetDict, IterableDataset, IterableDatasetDict

        kwargs = dict(batch_size=batch_size, num_proc=num_proc, desc=desc, **map_kwargs)
        if batch_size is not None and (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                                       or batch_size < 1):
            raise ValueError(f"batch_size must be a positive integer or None (automatic), got {batch_size!r}.")
        if isinstance(dataset, (DatasetDict, IterableDatasetDict)):
            for name, split in dataset.items():
                try:
                    self._check_input(split)
                except SchemaError as err:
                    raise SchemaError(f"Split {name!r}: {err}") from None
            return type(dataset)({k: self.augment(v, **kwargs) for k, v in dataset.items()})
        if type(dataset).__module__.startswith("pandas"):
            dataset = Dataset.from_pandas(dataset, preserve_index=False)
        if not isinstance(dataset, (Dataset, IterableDataset)):
            raise TypeError(f"augment() takes a datasets.Dataset, DatasetDict, IterableDataset or pandas DataFrame, "
                            f"got {type(dataset).__name__}; for a list of dicts use Dataset.from_list(rows).")
        self._check_input(dataset)
        self.stats = AugmentationStats()
        desc = desc or f"{self.method or type(self).__name__} augmentation"
        if isinstance(dataset, IterableDataset):
            if num_proc not in (None, 1):
                raise ValueError("An IterableDataset is augmented lazily in this process; num_proc is not supported "
                                 "(datasets' IterableDataset.map has no num_proc). Drop num_proc, or load the data "
                                 "as a Dataset.")
            features = self.output_features(dataset.features) if dataset.features is not None else None
            return dataset.map(self, batched=True, batch_size=batch_size or 32, with_indices=True, features=features,
                               **map_kwargs)
        remove_stale_temp_files(dataset)
        # The map always keeps the originals: they carry every row's outcome, so the counts below are exact even
        # when nothing ran in this process (cache hit, num_proc workers). They are filtered out afterwards.
        runner = copy.copy(self)
        runner._trace, runner.stats = True, AugmentationStats()
        global _WATCH_FORKS
        _WATCH_FORKS = True
        try:
            batch_size = batch_size or auto_batch_size(len(dataset))
            result = dataset.map(runner, batched=True, batch_size=batch_size, num_proc=num_proc, with_indices=True,
                                 features=self.output_features(dataset.features), desc=desc, **map_kwargs)
        finally:
            _WATCH_FORKS = False
        # Every row went through this process (no cache hit, no workers): its own counts are exact, and reading
        # them back from the output would only touch every page of it.
        done_here = runner.stats.rows_in == len(dataset)
        self.stats = runner.stats if done_here else AugmentationStats.from_dataset(result)
        if self.stats.rows_out != len(result):  # trace rows to remove
            result = result.filter(lambda kinds: [k != TRACE_KIND for k in kinds], input_columns="cf_kind",
                                   batched=True, batch_size=1000, desc="removing trace rows")
        return result

    def _check_input(self, dataset: Any) -> None:
        if dataset.features is None:  # an IterableDataset of unknown features: rows are checked as they come
            return
        _refuse_augmented(list(dataset.features))
        self.schema.validate_features(dataset.features)

    # ------------------------------------------------------------------------------------ config and fingerprint
    def components(self) -> dict[str, Any]:
        """Learned or external parts (generator, checker, ...) by role; subclasses extend."""
        return {}

    def get_config_dict(self) -> dict[str, Any]:
        config = {"method": self.method, "augmenter": type(self).__name__, "config": self.config.to_dict(),
                  "schema": self.schema.to_dict()}
        if self.filters:  # recorded for cards and provenance; pass filters= again when loading
            config["filters"] = [f.get_config_dict() for f in self.filters]
        return config

    def fingerprint(self) -> str:
        from ._version import __version__

        parts = {"version": __version__, "cls": f"{type(self).__module__}.{type(self).__qualname__}",
                 "code": code_digest(type(self)), "trace": self._trace, "config": self.get_config_dict(),
                 "components": {k: digest_object(v) for k, v in sorted(self.components().items())},
                 "filters": [f.fingerprint() for f in self.filters]}
        return digest_json(parts)

    # --------------------------------------------------------------------------------------- save, load, share
    def save_pretrained(self, save_directory: str | os.PathLike, *, copy_components: bool = False,
                        references_only: bool = False, overwrite: bool = False) -> Path:
        """Save the config, the schema and the components so the augmenter can be rebuilt whole.

        A component that came from (or was pushed to) the Hub is stored as a reference (repo id and commit);
        others, or all with ``copy_components=True``, are saved into a subfolder named after their role.
        ``references_only=True`` writes the config alone, naming local components without saving them. The folder
        rules are those of :func:`cfaug_hf.hub.write_folder` (a foreign non-empty folder needs ``overwrite=True``;
        no file of yours is deleted).
        """
        from ._version import __version__
        from .hub import FORMAT_VERSION, write_folder

        with write_folder(save_directory, "augmenter", overwrite=overwrite) as tmp:
            refs: dict[str, Any] = {}
            for role, comp in sorted(self.components().items()):
                if comp is None:
                    refs[role] = None
                    continue
                if getattr(comp, "component_type", None) not in registry.COMPONENTS:
                    if references_only:
                        refs[role] = {"type": "callable", "name": getattr(comp, "__qualname__", type(comp).__name__)}
                        continue
                    raise TypeError(f"Cannot save {type(self).__name__}: its {role} is a {type(comp).__name__}, not "
                                    f"a cfaug component (Generator, LabelChecker, ...), so it cannot be restored.")
                origin = comp.hub_origin
                if origin and not copy_components:
                    refs[role] = {"type": comp.component_type, **origin}
                elif references_only:
                    refs[role] = {"type": comp.component_type, "local": True,
                                  "base_model": getattr(comp, "base_model", None)}
                else:
                    comp.save_pretrained(tmp / role)
                    refs[role] = {"type": comp.component_type, "path": role}
            data = {"component_type": "augmenter", "format_version": FORMAT_VERSION, "cfaug_hf_version": __version__,
                    **self.get_config_dict(), "components": refs, "citation": self.citation}
            (tmp / AUGMENTER_CONFIG).write_text(json.dumps(data, indent=2, ensure_ascii=False, default=list) + "\n")
        return Path(save_directory)

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike, *, revision: str | None = None,
                        token: str | None = None, repo_type: str = "model", subfolder: str | None = None,
                        **overrides: Any) -> Augmenter:
        """Rebuild a saved augmenter from a folder or a Hub repository.

        Called on :class:`Augmenter` itself, the saved method picks the class. Keyword arguments named like a
        component role (``generator=...``) replace that component; others override config fields. Example::

            augmenter = Augmenter.from_pretrained("org/fever-crossaug", repo_type="dataset", subfolder="augmenter")
        """
        from .hub import ComponentLoadError, path_inside, read_versioned_json, resolve_folder

        folder, _ = resolve_folder(name_or_path, "augmenter", revision=revision, token=token, repo_type=repo_type,
                                   subfolder=subfolder)
        data = read_versioned_json(folder / AUGMENTER_CONFIG, "augmenter", "augmenter")
        where = folder / AUGMENTER_CONFIG
        for key, kind in (("config", dict), ("schema", dict), ("components", (dict, type(None)))):
            if not isinstance(data.get(key, {} if key == "components" else None), kind):
                raise ComponentLoadError(f"{where}: {key!r} is {data.get(key)!r}; expected an object. The file is "
                                         f"damaged: save the augmenter again.")
        for role, ref in (data.get("components") or {}).items():
            if ref is not None and not isinstance(ref, dict):
                raise ComponentLoadError(f"{where}: components.{role} is {ref!r}; expected an object or null.")
        try:
            target = registry.augmenter_class(data.get("method", "")) if cls is Augmenter else cls
        except KeyError as err:
            raise ComponentLoadError(f"{folder} holds a {data.get('method')!r} augmenter: {err.args[0]}") from None
        if cls is not Augmenter and data.get("method") != cls.method:
            raise ComponentLoadError(f"{folder} holds a {data.get('method')!r} augmenter, not "
                                     f"{cls.method or 'a known method'!r}.")
        components: dict[str, Any] = {}
        for role, ref in (data.get("components") or {}).items():
            if role in overrides:
                components[role] = overrides.pop(role)
            elif ref is None:
                components[role] = None
            elif ref.get("type") not in registry.available()["components"]:
                raise ComponentLoadError(f"The {role} of this augmenter was a {ref.get('name') or ref.get('type')} "
                                         f"and was not saved; pass {role}=... to from_pretrained.")
            elif ref.get("local"):
                raise ComponentLoadError(f"The {role} of this augmenter was a local {ref['type']} (base model "
                                         f"{ref.get('base_model')}) that was not shared; pass {role}=....")
            elif "path" in ref:
                where = path_inside(folder, ref["path"], f"the {role}'s path in {AUGMENTER_CONFIG}")
                components[role] = registry.component_class(ref["type"]).from_pretrained(where)
            else:
                components[role] = registry.component_class(ref["type"]).from_pretrained(ref["repo_id"],
                                                                                 revision=ref.get("revision"),
                                                                                 token=token)
        filters = overrides.pop("filters", None)
        from .configs import ConfigError

        try:
            config = target.config_class.from_dict(data["config"], f"{where} (config)")
        except ConfigError as err:
            raise ComponentLoadError(str(err)) from None
        try:
            schema = TaskSchema.from_dict(data["schema"])
        except (KeyError, TypeError, ValueError, SchemaError) as err:
            raise ComponentLoadError(f"{where}: the schema cannot be rebuilt ({type(err).__name__}: {err}).") from None
        if overrides:
            config = target.config_class.from_dict({**config.to_dict(), **overrides}, "from_pretrained() arguments")
        return target(schema=schema, config=config, filters=filters, **components)

    def push_to_hub(self, repo_id: str, *, private: bool | None = None, token: str | None = None,
                    commit_message: str | None = None, copy_components: bool = False) -> str:
        """Push the augmenter (config, schema, component references or copies) with a card; returns the commit."""
        from .hub import cards_module

        return cards_module().push_augmenter(self, repo_id, private=private, token=token, commit_message=commit_message,
                              copy_components=copy_components)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config})"


register_cheap_hash([Augmenter])
