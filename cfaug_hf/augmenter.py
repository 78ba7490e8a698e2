"""The augmenter contract shared by every method.

An augmenter is a picklable callable for ``dataset.map(augmenter, batched=True)``. Given a batch it returns, for each
input row in order, the row itself (unless ``keep_original=False``) followed by that row's counterfactuals, with every
input column re-emitted and these provenance columns added:

| column | type | meaning |
|---|---|---|
| ``cf_is_counterfactual`` | bool | False for the original row, True for a generated one |
| ``cf_method`` | string | the method that made the row (``"crossaug"``, ...); ``""`` on originals |
| ``cf_kind`` | string | ``"original"`` or the method's kind of counterfactual (e.g. ``"c'+e"``) |
| ``cf_source_id`` | string | the source row's id column, or a digest of its texts and label |
| ``cf_original_label`` | string | the source row's label name |
| ``cf_edit`` | string | JSON description of the edit, in the method's own keys; on originals ``""``, or ``{"skipped": [...]}`` where the method says why a target was not reached (the edit-until-flipped loop names the units left) |
| ``cf_change`` | string | the words changed, e.g. ``claim: won → lost`` (``""`` on originals): searchable in the Hub's dataset viewer |
| ``cf_outcome`` | list of string | everything that happened to the source row (shared by its whole group) |

``cf_outcome`` makes the statistics recoverable from the output alone (after a cache hit or with ``num_proc``):
`AugmentationStats.from_dataset`. Every input row is accounted for: it produced counterfactuals or was skipped
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
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from . import registry
from .sharing.configs import TypedConfig
from .fingerprint import code_digest, digest_json, digest_object, global_state_digest, register_cheap_hash, row_seed
from .provenance import (PROVENANCE_COLUMNS, TRACE_KIND, AugmentationStats, describe_change, provenance_features,
                         refuse_augmented, source_id)
from .assembly import AUGMENTER_CONFIG  # noqa: F401 (re-exported: the file that marks a saved augmenter)
from .sharing.consent import EndpointNotAllowedError, endpoint_components
from .sharing.credentials import scrub_text
from .workers import enter_worker_process, remove_stale_temp_files, watching_forks
from .registry.roles import Role
from .schema import SchemaError, TaskSchema
from .verbosity import get_logger

__all__ = [
    "Augmenter", "AugmenterConfig", "AugmentationError", "Counterfactual", "Example", "RowResult", "AugmentationStats",
    "PROVENANCE_COLUMNS", "provenance_features", "auto_batch_size",
]

logger = get_logger(__name__)


@dataclass
class AugmenterConfig(TypedConfig):
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
        from .sharing.configs import config_from_dict

        return config_from_dict(cls, data, where)

    @classmethod
    def help(cls) -> dict[str, str]:
        """Each field's help text, for ``--help`` and cards."""
        return {f.name: f.metadata.get("help", "") for f in dataclasses.fields(cls)}


@dataclass
class FlipCheckedConfig(AugmenterConfig):
    """The config of a method with a checker role: the one option of its flip decision (`cfaug_hf.filters.FlipCheck`,
    through `Augmenter.flip_check`). The registry refuses a method that declares a checker role with a config
    that is not one, so every such method has the option, on the command line too (``--checker-threshold``)."""

    checker_threshold: float | None = field(default=None, metadata={
        "help": "With a checker: keep a counterfactual only if the checker's probability of its new label is at "
                "least this; None uses the checker's calibrated accept_threshold (the shipped checkers have one), "
                "else its top prediction. The one flip decision: the label-flip filter and the edit-until-flipped "
                "loop read it alike."})

    def __post_init__(self) -> None:
        from .filters.flip_check import check_threshold

        check_threshold("checker_threshold", self.checker_threshold)


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
    #: why targets were not reached, for the original's ``cf_edit`` (``{"skipped": notes}``): JSON-ready dicts
    notes: list[dict[str, Any]] = field(default_factory=list)


def _bad_text(value: Any) -> str | None:
    """Why ``value`` (a generated cell: text, or a list of texts) cannot be written to an Arrow file, or None."""
    if isinstance(value, str):
        if "\x00" in value:
            return "nul"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate ("\ud800"), which Arrow refuses when the batch is written
            return "lone_surrogate"
        return None
    if isinstance(value, (list, tuple)):
        return next((why for why in map(_bad_text, value) if why), None)
    if isinstance(value, dict):
        return next((why for why in map(_bad_text, [*value, *value.values()]) if why), None)
    return None


def settle(res: RowResult) -> None:
    """Make a row's counts those of the counterfactuals it will write, whatever the method reported: one
    ``produced:KIND`` event per counterfactual; a counterfactual whose text cannot be written (a lone surrogate or a
    NUL from a generator or an LLM) is dropped as ``filtered:invalid_text`` (``skipped:invalid_text`` when none is
    left) instead of failing the whole map when Arrow writes the batch; an exact repeat of another of the row's
    counterfactuals (same columns, label and kind) is dropped as ``filtered:duplicate``."""
    kept, seen, dropped = [], set(), []
    for cf in res.counterfactuals:
        why = _bad_text(cf.values) or _bad_text(cf.label) or _bad_text(cf.edit)
        if why:
            dropped += ["filtered:invalid_text", f"invalid_text:{why}"]
            continue
        key = json.dumps([cf.values, cf.label, cf.kind], sort_keys=True, default=str, ensure_ascii=False)
        if key in seen:
            dropped.append("filtered:duplicate")
            continue
        seen.add(key)
        kept.append(cf)
    # The method's own produced events stay where it put them, as many of each kind as are written; missing ones
    # are added at the end.
    quota = Counter(cf.kind for cf in kept)
    events = []
    for event in res.events:
        kind = event[len("produced:"):] if event.startswith("produced:") else None
        if kind is None or quota[kind] > 0:
            events.append(event)
            if kind is not None:
                quota[kind] -= 1
    if res.counterfactuals and not kept:
        events.append("skipped:invalid_text")
    res.events[:] = events + dropped + [f"produced:{kind}" for kind, n in quota.items() for _ in range(n)]
    res.counterfactuals[:] = kept


def whole_dataset(dataset: Any, what: str) -> Any:
    """``dataset`` when it is a `datasets.Dataset` (or a pandas DataFrame, converted); otherwise a `TypeError`
    saying how to give ``what`` one: a method that reads every row before mapping (ICDA's swaps, RACE's entity
    pool, the epoch dataset of the callbacks) cannot take a stream or a dict of splits."""
    from datasets import Dataset, DatasetDict, IterableDataset, IterableDatasetDict

    if type(dataset).__module__.startswith("pandas"):
        return dataset_from_pandas(dataset)
    if isinstance(dataset, (DatasetDict, IterableDatasetDict)):
        raise TypeError(f"{what} reads one dataset whole; got a {type(dataset).__name__} with splits "
                        f"{list(dataset)}: pass one split, e.g. dataset[{next(iter(dataset), 'train')!r}].")
    if isinstance(dataset, IterableDataset):
        raise TypeError(f"{what} reads every row before it maps any, so it needs a datasets.Dataset, not a stream "
                        f"(IterableDataset): load it without streaming=True, or materialise it with "
                        f"Dataset.from_generator(lambda: (yield from stream), features=stream.features).")
    if not isinstance(dataset, Dataset):
        raise TypeError(f"{what} takes a datasets.Dataset or a pandas DataFrame, got {type(dataset).__name__}; "
                        f"for a list of dicts use Dataset.from_list(rows).")
    return dataset


def dataset_from_pandas(frame: Any) -> Any:
    """``Dataset.from_pandas`` with a one-line error naming the column whose values Arrow cannot hold as one type
    (a label column mixing strings and numbers)."""
    import pyarrow as pa
    from datasets import Dataset

    try:
        return Dataset.from_pandas(frame, preserve_index=False)
    except (pa.ArrowTypeError, pa.ArrowInvalid) as err:
        for column in frame.columns:
            kinds = sorted({type(v).__name__ for v in frame[column] if v is not None})
            if len(kinds) > 1:
                raise TypeError(f"Column {column!r} of the DataFrame mixes value types ({', '.join(kinds)}); a "
                                f"dataset column holds one type: convert it first, e.g. df[{column!r}] = "
                                f"df[{column!r}].astype(str).") from None
        raise TypeError(f"The DataFrame cannot be converted to a dataset: {err}") from None


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


def auto_batch_size(rows: int) -> int:
    """The map batch size `Augmenter.augment` uses by default: ``rows // 100`` clipped to 8..1000.

    Small batches make the progress bar move with a slow generator (the bar moves once a batch: 8 rows at 1.5-3.5
    CPU-seconds a row is 12-28 s, where a floor of 32 left a 20-row run at 0/20 for minutes); large ones matter at
    scale, because every map batch becomes its own Arrow record batch and opening an output of many tiny record
    batches costs memory (1M rows in batches of 32: 2.15 GiB peak RSS against 1.08 GiB in batches of 1000; see
    benchmarks/pipeline_overhead.py). Models still batch on their own across a map batch.

    Examples:
        >>> auto_batch_size(20), auto_batch_size(500), auto_batch_size(10_000), auto_batch_size(1_000_000)
        (8, 8, 100, 1000)
    """
    return max(8, min(1000, rows // 100))


def _check_counts(**counts: Any) -> None:
    """``batch_size`` (None: automatic) and ``checkpoint_rows`` are positive integers."""
    for name, value in counts.items():
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ValueError(f"{name} must be a positive integer{' or None (automatic)' if name == 'batch_size' else ''}"
                             f", got {value!r}.")


#: With an automatic batch size, a checkpointed run sizes each part's batches so that one takes about this long
#: (the bar moves once a batch), from the seconds per row measured so far.
BAR_SECONDS = 5.0


def _output_fingerprint(runner: Any, dataset: Any, map_args: dict[str, Any]) -> str:
    """The output's name in datasets' cache (its public ``new_fingerprint=``), from what decides its rows: the
    augmenter's config, weights and code, the input, and the map settings; not from hashing the augmenter object."""
    settings = {k: repr(v) for k, v in sorted(map_args.items()) if k not in ("desc", "num_proc")}
    return digest_json({"augmenter": runner.fingerprint(), "data": dataset._fingerprint, "map": settings})[:32]


def _map_in_parts(dataset: Any, runner: Any, folder: Path, part_rows: int, map_args: dict[str, Any], *,
                  paced: bool = False) -> Any:
    """``dataset.map(runner, **map_args)`` in consecutive parts of ``part_rows`` rows, each part's output kept in
    ``folder`` under a name made of the augmenter's and the data's fingerprints, so a rerun loads the finished parts
    (datasets' own cache: a part file is written to a temporary file and renamed when complete) and maps the rest.

    ``paced`` (the batch size was automatic): the first part maps in batches of at most 8 rows and each later part
    in batches that take about `BAR_SECONDS` at the rate measured so far (never more rows than the automatic size),
    so the bar keeps moving with a slow generator. A row's output does not depend on its batch, so the parts are
    the same whatever the batches were, and a rerun reads them back under the same names."""
    from datasets import concatenate_datasets

    from .workers import remove_stale_temp_files_in

    folder.mkdir(parents=True, exist_ok=True)
    remove_stale_temp_files_in(folder)
    key = digest_json({"augmenter": runner.fingerprint(), "data": dataset._fingerprint, "part_rows": part_rows,
                       "batch_size": map_args["batch_size"]})[:16]
    n = len(dataset)
    starts = list(range(0, n, part_rows)) or [0]
    desc = map_args.pop("desc")
    largest = map_args["batch_size"]
    parts = []
    clock = _RunClock(n)
    for i, start in enumerate(starts):
        part = dataset.select(range(start, min(start + part_rows, n)))
        name = folder / f"part-{key}-{i + 1:05d}-of-{len(starts):05d}.arrow"
        if paced:
            map_args["batch_size"] = clock.batch_for(BAR_SECONDS, largest)
        before = runner.stats.rows_in
        trusted = _trusted_part(name, f"part {i + 1} of {len(starts)}")
        with clock.part(len(part), lambda: runner.stats.rows_in - before):
            parts.append(part.map(_Offset(runner, start), cache_file_name=str(name),
                                  new_fingerprint=f"{key}{i:08x}",
                                  desc=f"{desc} (part {i + 1}/{len(starts)}{clock.left()})", **map_args))
        if not trusted:
            _record_part(name, parts[-1])
    return concatenate_datasets(parts)


def _part_files(name: Path) -> list[Path]:
    """The files of one finished part: ``name``, or its shards when it was mapped with ``num_proc``."""
    return sorted({*([name] if name.exists() else []), *name.parent.glob(f"{name.stem}_*_of_*{name.suffix}")})


def _digest_file(path: Path) -> str:
    import hashlib

    h = hashlib.blake2b(digest_size=20)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _record_part(name: Path, part: Any) -> None:
    """Write the digest of each file a part was just written to, beside it (``...digest.json``), once the part is
    complete: a rerun reads back only files that still match it."""
    files = [Path(f["filename"]) for f in getattr(part, "cache_files", []) or []]
    files = [f for f in files if f.parent == name.parent and f.name.startswith(name.stem)]
    if files:
        record = name.with_suffix(".digest.json")
        tmp = record.with_name(f".{record.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({f.name: _digest_file(f) for f in files}, sort_keys=True), encoding="utf-8")
        os.replace(tmp, record)  # whole or not at all: a half-written record would distrust a good part


def _trusted_part(name: Path, what: str) -> bool:
    """Whether the finished part ``name`` may be read back: every one of its files matches the digest recorded when
    it was written. A part that does not (a byte changed, a file cut short, no record: a run killed between the
    rename and the record, or an earlier release) is removed, and said so, so that it is computed again."""
    record = name.with_suffix(".digest.json")
    files = _part_files(name)
    if not files and not record.exists():
        return False
    try:
        digests = json.loads(record.read_text(encoding="utf-8"))
        ok = isinstance(digests, dict) and sorted(digests) == [f.name for f in files] and all(
            digests[f.name] == _digest_file(f) for f in files)
    except (OSError, ValueError):
        ok = False
    if ok:
        return True
    logger.warning("The finished %s in %s does not match the digest written when it finished (a file was changed, "
                   "cut short or left without its record); it is computed again.", what, name.parent)
    for path in (*files, record):
        path.unlink(missing_ok=True)
    return False


class _RunClock:
    """Time left in a run of parts, from the seconds per row of the rows computed so far (parts read back from
    the cache cost nothing and are not counted); what each part's bar says after its number."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.computed, self.seconds = total, 0, 0, 0.0

    @contextlib.contextmanager
    def part(self, rows: int, computed: Callable[[], int]) -> Iterator[None]:
        start = time.perf_counter()
        yield
        made = computed()
        if made:
            self.computed += made
            self.seconds += time.perf_counter() - start
        self.done += rows

    def batch_for(self, seconds: float, largest: int) -> int:
        """Rows a batch should hold to take about ``seconds`` at the rate measured so far (at most 8 before any
        rate is known; never more than ``largest``)."""
        if not self.computed:
            return min(8, largest)
        return max(1, min(largest, int(seconds * self.computed / max(self.seconds, 1e-9))))

    def left(self) -> str:
        if not self.computed or self.done >= self.total:
            return ""
        per_row = self.seconds / self.computed
        return f"; {per_row:.2g} s/row, about {_duration(per_row * (self.total - self.done))} left for all"


def _duration(seconds: float) -> str:
    """``seconds`` as a person says it: 40 s, 12 min, 3.5 h."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class _Offset:
    """The augmenter over one part of a dataset, told each row's index in the whole dataset (row errors name it)."""

    def __init__(self, runner: Any, offset: int) -> None:
        self.runner, self.offset = runner, offset

    def __call__(self, batch: Mapping[str, Sequence[Any]], indices: Sequence[int]) -> dict[str, list]:
        return self.runner(batch, [i + self.offset for i in indices])


#: The config class of an augmenter (``class CrossAugAugmenter(Augmenter[CrossAugConfig])``): ``self.config`` is one.
ConfigT = TypeVar("ConfigT", bound=AugmenterConfig)


class Augmenter(abc.ABC, Generic[ConfigT]):
    """Base class of all augmenters: validation, provenance, per-row seeds, statistics and fingerprinting.

    Subclasses set ``method``, ``config_class`` and ``citation`` and implement `augment_examples`, which gets a
    whole batch of `Example` objects (so models run batched) and returns one `RowResult` per example.

    Examples:
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
    #: The `TaskSchema` preset the method runs on when given no schema ("" for none).
    default_task: ClassVar[str] = ""
    config_class: ClassVar[type[AugmenterConfig]] = AugmenterConfig
    citation: ClassVar[str] = ""
    #: Named settings of the method (``"paper"``: the published ones), from the method's own ``paper.py``.
    presets: ClassVar[dict[str, Any]] = {}
    #: The component slots of the constructor, by keyword: what `components` returns, what a saved augmenter
    #: records and a recipe or ``--ROLE`` option may name (see `cfaug_hf.registry.roles.Role`).
    roles: ClassVar[dict[str, Role]] = {}
    #: Set on the copy that `augment` maps: rows the output would leave out are emitted as trace rows.
    _trace: bool = False

    config: ConfigT

    def __init__(self, schema: TaskSchema, config: ConfigT | None = None, *,
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
        # The filters the user gave; a method may add its own (a checker's label-flip filter) after this, which
        # its constructor rebuilds on load, so only these are saved.
        self.user_filters = tuple(self.filters)
        for f in self.filters:
            if not (hasattr(f, "keep") and hasattr(f, "name")):
                raise TypeError(f"filters must be cfaug_hf.filters.Filter objects, got {type(f).__name__}.")
        self.stats = AugmentationStats()
        self._pid = os.getpid()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__orig_bases__" not in vars(cls):
            # A subclass of Augmenter[SomeConfig]'s subclass would otherwise inherit its parent's __orig_bases__,
            # and dill (datasets' map workers) rebuilds a class defined in __main__ from those: the parent drops
            # out of its MRO and super() reaches the abstract base.
            cls.__orig_bases__ = cls.__bases__
        register_cheap_hash([cls])
        registry.declared_attributes(cls)
        registry.register_augmenter(cls)

    @classmethod
    def config_from_data(cls, dataset: Any, schema: TaskSchema | None) -> dict[str, Any]:
        """Config values this method takes from the data it will run on when they are not given (``cfaug augment``
        calls it before building the augmenter; ``schema`` None means the method's default); none by default.
        CFGen returns the dataset's entity lexicon."""
        return {}

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
        """Produce the counterfactuals of a batch of examples, one `RowResult` per example, in order."""

    def __call__(self, batch: Mapping[str, Sequence[Any]], indices: Sequence[int] | None = None) -> dict[str, list]:
        if getattr(self, "_pid", None) != os.getpid():
            self._enter_worker_process()
        self.check_endpoints()
        self._check_batch(batch)
        labels = self.schema.batch_labels(batch, indices)
        columns = list(batch.keys())
        n = len(labels)
        rows = [{c: batch[c][i] for c in columns} for i in range(n)]
        examples = [Example(row, labels[i], source_id(row, self.schema), None,
                            None if indices is None else indices[i], base_seed=self.config.seed)
                    for i, row in enumerate(rows)]
        try:
            results = self.augment_examples(examples) if examples else []
        except (SchemaError, EndpointNotAllowedError):
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
        for res in results:
            settle(res)
        if self.filters:
            self.apply_filters(examples, results)
        out: dict[str, list] = {c: [] for c in (*columns, *PROVENANCE_COLUMNS)}
        label_col = self.schema.label_column
        for row, ex, res in zip(rows, examples, results):
            outcome = list(res.events)
            if not any(e.startswith(("produced:", "skipped:")) for e in outcome):
                outcome.append("skipped:no_counterfactual")
            emitted = 0
            note = json.dumps({"skipped": res.notes}, ensure_ascii=False, sort_keys=True) if res.notes else ""
            if self.config.keep_original and res.keep_original:
                self._emit(out, row, columns, False, "", "original", ex, note, outcome)
                emitted += 1
            elif self._trace:  # augment(): every source row leaves its outcome; removed after the map
                self._emit(out, row, columns, False, "", TRACE_KIND, ex, note, outcome)
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

    def _check_batch(self, batch: Mapping[str, Sequence[Any]]) -> None:
        """Refuse one row given as a batch, a batch that is already augmented, and one without the id column."""
        label_values = batch.get(self.schema.label_column) if hasattr(batch, "get") else None
        one_row = isinstance(label_values, (str, int, float)) or (label_values is not None
                                                                  and not hasattr(label_values, "__len__"))
        if self.schema.is_token_level and label_values is not None and len(label_values):
            one_row = not isinstance(label_values[0], (list, tuple))  # one row's tags, not a batch of tag lists
        if one_row:
            raise TypeError(f"{type(self).__name__} got one row ({self.schema.label_column}={label_values!r}) "
                            f"instead of a batch: call dataset.map(augmenter, batched=True).")
        refuse_augmented(list(batch.keys()))
        if self.schema.id_column and self.schema.id_column not in batch:
            raise SchemaError(f"Column {self.schema.id_column!r} (the schema's id_column) is missing; the batch has "
                              f"columns {list(batch.keys())}.")

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
            if len(keep) != len(flat) or len(scores) != len(flat):  # zip would let the rest through unfiltered
                raise TypeError(f"The filter {f.name or type(f).__name__} returned {len(keep)} decisions and "
                                f"{len(scores)} scores for {len(flat)} counterfactuals; expected one of each per "
                                f"counterfactual.")
            reasons = f.reasons if f.reasons is not None and len(f.reasons) == len(flat) else [None] * len(flat)
            cut = f.truncated if f.truncated is not None and len(f.truncated) == len(flat) else [False] * len(flat)
            for (g, res, cf), was_cut in zip(flat, cut):
                if was_cut and f"truncated:{f.name}_input" not in res.events:
                    res.events.append(f"truncated:{f.name}_input")
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
        self._pid = os.getpid()
        enter_worker_process()

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
        out["cf_change"].append(describe_change(ex.values, row, self.schema.edit_columns) if is_cf else "")
        out["cf_outcome"].append(outcome)

    # ------------------------------------------------------------------------------------------------ conveniences
    def output_features(self, features: Any) -> Any:
        """The features of the augmented dataset given the input's (pass as ``map(features=...)`` if you like)."""
        from datasets import Features

        kept = {k: v for k, v in features.items() if k not in PROVENANCE_COLUMNS}
        return Features({**kept, **provenance_features()})

    def augment(self, dataset: Any, *, batch_size: int | None = None, num_proc: int | None = None,
                desc: str | None = None, checkpoint_dir: str | os.PathLike | None = None,
                checkpoint_rows: int = 256, **map_kwargs: Any) -> Any:
        """Validate ``dataset`` against the schema, run ``dataset.map(self, batched=True)`` and set ``self.stats``.

        Same output as calling ``map`` yourself; in addition:

        * ``batch_size`` (rows per map batch) defaults to about a hundredth of the dataset, between 8 and 1000
          (see `auto_batch_size`): the progress bar moves about a hundred times whatever the size, and a
          million rows become a thousand Arrow record batches instead of 31,250, which keeps peak memory flat.
          Models still run in their own batches (``Generator`` config ``batch_size``);

        * column and type errors are raised before any row is read (for a ``DatasetDict``, in every split before
          any split is augmented, naming the split), and row errors name the row's index in the dataset;
        * ``self.stats`` holds exactly this call's counts, also after a cache hit, with ``num_proc``, and with
          ``keep_original=False`` (the map keeps the originals as a trace, and they are filtered out after);
        * a pandas ``DataFrame`` is accepted (converted with ``Dataset.from_pandas``), and an ``IterableDataset``
          is mapped lazily (``self.stats`` then counts rows as they are read);
        * temporary files left in the dataset's cache folder by an earlier map that was killed are removed;
        * with ``checkpoint_dir``, the rows are augmented in parts of ``checkpoint_rows``, each written to that
          folder as an Arrow file (by ``datasets``' own map cache) as soon as it is done: a run killed after hours
          starts again at its first unfinished part, with output identical to an uninterrupted run (every row's
          seed comes from its content, never its position). Parts of other settings or data are not reused.

        Examples:
            >>> from datasets import Dataset
            >>> from cfaug_hf import CrossAugAugmenter
            >>> import tempfile
            >>> aug = CrossAugAugmenter(generator=lambda claims: [c.replace("is", "is not") for c in claims])
            >>> rows = Dataset.from_dict({"claim": ["Paris is in France."] * 3, "evidence": ["Paris is a city."] * 3,
            ...                           "label": ["SUPPORTS"] * 3})
            >>> out = aug.augment(rows, checkpoint_dir=tempfile.mkdtemp(), checkpoint_rows=2)
            >>> aug.stats.rows_in, len(out) > 3
            (3, True)
        """
        from datasets import Dataset, DatasetDict, IterableDataset, IterableDatasetDict

        kwargs = dict(batch_size=batch_size, num_proc=num_proc, desc=desc, checkpoint_dir=checkpoint_dir,
                      checkpoint_rows=checkpoint_rows, **map_kwargs)
        _check_counts(batch_size=batch_size, checkpoint_rows=checkpoint_rows)
        if isinstance(dataset, (DatasetDict, IterableDatasetDict)):
            return self._augment_splits(dataset, kwargs)
        if type(dataset).__module__.startswith("pandas"):
            dataset = dataset_from_pandas(dataset)
        if not isinstance(dataset, (Dataset, IterableDataset)):
            raise TypeError(f"augment() takes a datasets.Dataset, DatasetDict, IterableDataset or pandas DataFrame, "
                            f"got {type(dataset).__name__}; for a list of dicts use Dataset.from_list(rows).")
        self._check_input(dataset)
        self.check_endpoints()
        self.stats = AugmentationStats()
        desc = desc or f"{self.method or type(self).__name__} augmentation"
        if isinstance(dataset, IterableDataset):
            if checkpoint_dir is not None:
                raise ValueError("checkpoint_dir needs a Dataset (its rows are written in numbered parts); an "
                                 "IterableDataset is augmented lazily, row by row. Load the data as a Dataset.")
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
        with watching_forks():
            automatic = batch_size is None
            batch_size = batch_size or auto_batch_size(len(dataset))
            map_args = dict(batched=True, batch_size=batch_size, num_proc=num_proc, with_indices=True,
                            features=self.output_features(dataset.features), desc=desc, **map_kwargs)
            if checkpoint_dir is None:
                map_args.setdefault("new_fingerprint", _output_fingerprint(runner, dataset, map_args))
                result = dataset.map(runner, **map_args)
            else:
                result = _map_in_parts(dataset, runner, Path(checkpoint_dir), checkpoint_rows, map_args,
                                       paced=automatic)
        # Every row went through this process (no cache hit, no workers): its own counts are exact, and reading
        # them back from the output would only touch every page of it.
        done_here = runner.stats.rows_in == len(dataset)
        # Nothing ran in this process and no worker was asked to: the datasets cache served the whole map.
        self.served_from_cache = runner.stats.rows_in == 0 and len(dataset) > 0 and not (num_proc and num_proc > 1)
        #: Rows augmented in this process by this call (the rest came from the cache or checkpointed parts).
        self.rows_computed = runner.stats.rows_in
        self.stats = runner.stats if done_here else AugmentationStats.from_dataset(result)
        if self.stats.rows_out != len(result):  # trace rows to remove
            result = result.filter(lambda kinds: [k != TRACE_KIND for k in kinds], input_columns="cf_kind",
                                   batched=True, batch_size=1000, desc="removing trace rows")
        return result

    def _augment_splits(self, dataset: Any, kwargs: dict[str, Any]) -> Any:
        """`augment` of each split, every split checked before any is augmented; checkpoints per split."""
        for name, split in dataset.items():
            try:
                self._check_input(split)
            except SchemaError as err:
                raise SchemaError(f"Split {name!r}: {err}") from None
        folder = kwargs.get("checkpoint_dir")
        return type(dataset)({k: self.augment(v, **{**kwargs, "checkpoint_dir": Path(folder) / k if folder else None})
                              for k, v in dataset.items()})

    def counterfactuals(self, text: str | Mapping[str, Any], label: Any) -> list[dict[str, Any]]:
        """The counterfactuals of one input, without building a dataset: ``text`` is a string for one-text tasks
        (sentiment, topic) or a dict of the schema's text columns (``{"premise": ..., "hypothesis": ...}``,
        ``{"claim": ..., "evidence": [...]}``); ``label`` its label (name or id). Returns the rows `augment` would
        write for it, without the original, each with its provenance columns (``cf_kind``, ``cf_edit``, ...); an
        empty list when no counterfactual was made (``self.stats`` says why).

        Examples:
            >>> from cfaug_hf import CrossAugAugmenter
            >>> aug = CrossAugAugmenter(generator=lambda claims: [c.replace(" is ", " is not ") for c in claims])
            >>> rows = aug.counterfactuals({"claim": "Paris is in France.", "evidence": "Paris is a French city."},
            ...                            "SUPPORTS")
            >>> [(r["claim"], r["label"]) for r in rows if r["cf_kind"] == "c'+e"]
            [('Paris is not in France.', 'REFUTES')]
        """
        from datasets import Dataset
        from datasets.utils.logging import (disable_progress_bar, enable_progress_bar,
                                            is_progress_bar_enabled)

        columns = self.schema.text_columns
        if isinstance(text, str):
            if len(columns) != 1:
                raise TypeError(f"{type(self).__name__}.counterfactuals: this task has the text columns "
                                f"{list(columns)}; pass text as a dict of them, e.g. "
                                f"{{{', '.join(repr(c) + ': ...' for c in columns)}}}.")
            row: dict[str, Any] = {columns[0]: text}
        elif isinstance(text, Mapping):
            row = dict(text)
        else:
            raise TypeError(f"{type(self).__name__}.counterfactuals: text must be a string or a dict of the text "
                            f"columns {list(columns)}, got {type(text).__name__}.")
        row[self.schema.label_column] = label
        # Checked as a batch of one before Arrow sees it (pyarrow's own error names no column).
        self.schema.validate_batch({k: [v] for k, v in row.items()}, [0])
        if self.schema.id_column and self.schema.id_column not in row:
            row[self.schema.id_column] = source_id(row, dataclasses.replace(self.schema, id_column=None))
        shown = is_progress_bar_enabled()
        disable_progress_bar()  # one row: a bar would only flash
        try:
            out = self.augment(Dataset.from_list([row]))
        finally:
            if shown:
                enable_progress_bar()
        return [r for r in out.to_list() if r["cf_is_counterfactual"]]

    def _check_input(self, dataset: Any) -> None:
        if dataset.features is None:  # an IterableDataset of unknown features: rows are checked as they come
            return
        refuse_augmented(list(dataset.features))
        self.schema.validate_features(dataset.features)

    def flip_check(self, checker: Any, **options: Any) -> Any:
        """The flip decision of this augmenter for ``checker`` (`cfaug_hf.filters.FlipCheck`): the config's
        ``checker_threshold``, else the checker's calibrated threshold, else its top prediction; ``options`` are
        FlipCheck's (``margin``, ``residual``)."""
        from .filters.flip_check import FlipCheck

        return FlipCheck(checker, getattr(self.config, "checker_threshold", None), **options)

    def label_flip_filter(self, checker: Any) -> Any:
        """The label-flip filter of this augmenter's flip decision (what a method with a checker puts first)."""
        from .filters import LabelFlipFilter

        return LabelFlipFilter(checker, self.flip_check(checker).given)

    def check_endpoints(self) -> None:
        """Raise `cfaug_hf.sharing.consent.EndpointNotAllowedError` when a component would contact an endpoint that
        loaded data named and the user has not allowed (`cfaug_hf.allow_endpoints`, ``--allow-endpoint``);
        `augment` and every map batch check first, so nothing is sent before."""
        for component in endpoint_components(self):
            component.check_endpoint()

    # ------------------------------------------------------------------------------------ config and fingerprint
    def components(self) -> dict[str, Any]:
        """Learned or external parts (generator, checker, ...) by role: the attribute of each declared role."""
        return {name: getattr(self, name) for name in self.roles}

    def get_config_dict(self) -> dict[str, Any]:
        config = {"method": self.method, "augmenter": type(self).__name__, "config": self.config.to_dict(),
                  "schema": self.schema.to_dict()}
        if self.filters:  # recorded for cards and provenance; pass filters= again when loading
            config["filters"] = [f.get_config_dict() for f in self.filters]
        return config

    def fingerprint(self) -> str:
        from ._version import __version__

        parts = {"version": __version__, "cls": f"{type(self).__module__}.{type(self).__qualname__}",
                 "code": code_digest(type(self)), "globals": global_state_digest(), "trace": self._trace,
                 "config": self.get_config_dict(),
                 "components": {k: digest_object(v) for k, v in sorted(self.components().items())},
                 "filters": [f.fingerprint() for f in self.filters]}
        return digest_json(parts)

    # --------------------------------------------------------------------------------------- save, load, share
    def save_pretrained(self, save_directory: str | os.PathLike, *, copy_components: bool = False,
                        references_only: bool = False, overwrite: bool = False) -> Path:
        """Save the config, the schema, the filters and the components so the augmenter can be rebuilt whole.

        A component that came from (or was pushed to) the Hub is stored as a reference (repo id and commit);
        others, or all with ``copy_components=True``, are saved into a subfolder named after their role.
        ``references_only=True`` writes the config alone, naming local components without saving them. The folder
        rules are those of `cfaug_hf.sharing.folders.write_folder` (a foreign non-empty folder needs ``overwrite=True``;
        no file of yours is deleted).
        """
        from .assembly import save_augmenter

        return save_augmenter(self, save_directory, copy_components=copy_components,
                              references_only=references_only, overwrite=overwrite)

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike, *, revision: str | None = None,
                        token: str | None = None, repo_type: str = "model", subfolder: str | None = None,
                        **overrides: Any) -> Augmenter:
        """Rebuild a saved augmenter (with its filters) from a folder or a Hub repository.

        Called on `Augmenter` itself, the saved method picks the class. Keyword arguments named like a
        component role (``generator=...``) replace that component, ``filters=[...]`` replaces the saved filters;
        others override config fields. Example:

        ```python
        augmenter = Augmenter.from_pretrained("org/fever-crossaug", repo_type="dataset", subfolder="augmenter")
        ```
        """
        from .assembly import load_augmenter

        return load_augmenter(cls, name_or_path, revision=revision, token=token, repo_type=repo_type,
                              subfolder=subfolder, **overrides)

    @classmethod
    def from_recipe(cls, recipe: str | os.PathLike | Mapping[str, Any], *, token: str | None = None,
                    **overrides: Any) -> Augmenter:
        """Build an augmenter from a recipe: a YAML or JSON file (or a dict) with the fields a saved
        ``cfaug_augmenter.json`` has, ``method``, ``schema``, ``config``, ``components`` and ``filters``. A pulled
        dataset's ``augmenter/cfaug_augmenter.json`` is a recipe; so are the files in the repository's
        ``recipes/``. A component is a reference (``{"type": "generator", "repo_id": ..., "revision": ...}``,
        ``{"type": ..., "path": "relative/folder"}``, ``{"type": ..., "shipped": "editors/claims"}``), ``"default"``
        (the method's shipped default) or null; ``overrides`` replace components or config fields, as in
        `from_pretrained`.

        Examples:
            >>> recipe = {"method": "cfgen", "schema": {"preset": "ner"},
            ...           "config": {"per_input": 2, "lexicon": {"PER": {"Ada": 1, "Bob": 1}}}}
            >>> type(Augmenter.from_recipe(recipe)).__name__, Augmenter.from_recipe(recipe).config.per_input
            ('CFGenAugmenter', 2)
        """
        from pathlib import Path

        from .assembly import build_augmenter, read_recipe

        if isinstance(recipe, Mapping):  # built by the caller's own code: what it names is the caller's
            return build_augmenter(cls, dict(recipe), Path.cwd(), "recipe", token=token, trusted=True, **overrides)
        return build_augmenter(cls, read_recipe(recipe), Path(recipe).resolve().parent, recipe, token=token,
                               **overrides)

    @classmethod
    def from_preset(cls, name: str = "paper", schema: Any = None, **overrides: Any) -> Augmenter:
        """The method as a named preset gives it: ``"paper"`` is the published algorithm and settings, each value
        cited in the method's ``paper.py`` (see `cfaug_hf.registry.presets`). Keyword arguments replace components or
        config fields, as in `from_pretrained`; ``schema`` replaces the method's default schema.

        Examples:
            >>> from cfaug_hf import CrossAugAugmenter
            >>> aug = CrossAugAugmenter.from_preset("paper", generator=lambda claims: claims)
            >>> aug.checker is None, aug.config.top_candidate_only, aug.config.reject_deletions
            (True, True, False)
        """
        from pathlib import Path

        from .assembly import build_augmenter

        if not cls.method:
            raise TypeError("Call from_preset on a method's class, e.g. CrossAugAugmenter.from_preset('paper').")
        data: dict[str, Any] = {"method": cls.method, "preset": name}
        if isinstance(schema, TaskSchema):
            data["schema"] = schema.to_dict()
        elif isinstance(schema, Mapping):  # a recipe's form: {"preset": "sentiment", "text": "review"}
            data["schema"] = dict(schema)
        elif schema is not None:
            raise TypeError(f"{cls.__name__}.from_preset: schema must be a TaskSchema or a dict such as "
                            f"{{'preset': 'sentiment'}}, got {type(schema).__name__}.")
        return build_augmenter(cls, data, Path.cwd(), f"{cls.__name__}.from_preset({name!r})", trusted=True,
                               **overrides)

    def push_to_hub(self, repo_id: str, *, private: bool | None = None, token: str | None = None,
                    commit_message: str | None = None, copy_components: bool = False) -> str:
        """Push the augmenter (config, schema, component references or copies) with a card; returns the commit."""
        from .sharing.push import push_augmenter

        return push_augmenter(self, repo_id, private=private, token=token, commit_message=commit_message,
                              copy_components=copy_components)

    def __repr__(self) -> str:
        return scrub_text(f"{type(self).__name__}({self.config})")


register_cheap_hash([Augmenter])
