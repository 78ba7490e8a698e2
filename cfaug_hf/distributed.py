"""Scale-out on Ray Data: any saved augmenter over a Ray Dataset, by a pool of actors that each load it once.

Ray does the scheduling, the retries and the spilling; this module only turns an augmenter into a Ray Data UDF:

* each actor calls `Augmenter.from_pretrained` once, on a folder every node can read or a Hub id;
* a block of rows becomes a ``datasets.Dataset`` (features kept from the Arrow schema's metadata) and goes
  through the augmenter's ``datasets.map`` transform, so a row's output is the one a local ``augmenter.augment``
  writes: rows are seeded from their own id, never from their worker or batch, and the output keeps the input
  order;
* every input row leaves a trace row carrying its outcome, so the statistics are counted exactly from the output
  (as `Augmenter.augment` does); trace rows are dropped before writing;
* a batch that raises is retried by Ray (``max_retries`` times, on a fresh call of the actor) and, if it keeps
  failing, the run stops with an `AugmentationError` naming the batch's rows: no row is
  ever dropped silently.

Example (a local Ray instance; on a cluster, ``ray.init(address="auto")`` and a shared folder or Hub id):

```python
import ray
from cfaug_hf.distributed import augment_to_parquet

ray.init(num_cpus=2)
stats = augment_to_parquet("claims.parquet", "runs/demo/augmenter", "runs/augmented", concurrency=2)
print(stats.summary_lines())
```
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from .deps import require

__all__ = ["augment_ray", "augment_to_parquet", "AugmentActor"]


class AugmentActor:
    """The Ray Data UDF: loads a saved augmenter once and augments blocks of rows (``batch_format="pyarrow"``).

    Examples:
        >>> actor = AugmentActor.__new__(AugmentActor)  # built by Ray in practice: AugmentActor("path/or/hub-id")
    """

    def __init__(self, augmenter: str, load_kwargs: dict[str, Any] | None = None,
                 imports: tuple[str, ...] = (), endpoints: tuple[tuple[str, str | None], ...] = ()) -> None:
        import importlib

        from .augmenter import Augmenter
        from .sharing.consent import allow_endpoints

        for module in imports:  # a method defined outside cfaug_hf registers itself when its module is imported
            importlib.import_module(module)
        for url, key_env in endpoints:  # what the user allowed where the run started, with each key variable
            allow_endpoints([url], key_env=key_env)
        self.augmenter = Augmenter.from_pretrained(augmenter, **(load_kwargs or {}))
        self.runner = _traced(self.augmenter)

    def __call__(self, table: Any) -> Any:
        from datasets import Dataset
        from datasets.table import InMemoryTable

        from .augmenter import AugmentationError
        from .provenance import source_id

        batch = Dataset(InMemoryTable(table))
        features = self.augmenter.output_features(batch.features)
        try:
            out = batch.map(self.runner, batched=True, batch_size=len(batch) or 1, features=features,
                            keep_in_memory=True, load_from_cache_file=False)
        except Exception as err:
            # Inside Ray a row number means nothing to the user: name the block's rows by their source ids.
            ids = [source_id(row, self.augmenter.schema) for row in batch.select(range(min(5, len(batch))))]
            more = f" and {len(batch) - len(ids)} more" if len(batch) > len(ids) else ""
            raise AugmentationError(f"{type(self.augmenter).__name__} failed on a batch of {len(batch)} row(s) "
                                    f"(source ids {', '.join(map(repr, ids))}{more}): {type(err).__name__}: "
                                    f"{err}") from err
        return out.data.table


def _traced(augmenter: Any) -> Any:
    import copy

    from .provenance import AugmentationStats

    runner = copy.copy(augmenter)
    runner._trace, runner.stats = True, AugmentationStats()  # every row leaves one outcome row (see augment())
    return runner


def _read(data: Any) -> Any:
    """A Ray Dataset from a Ray Dataset, a ``datasets.Dataset``, or a Parquet file or folder."""
    ray = require("ray", "Ray scale-out")
    if isinstance(data, ray.data.Dataset):
        return data
    if isinstance(data, (str, os.PathLike)):
        path = Path(data)
        if not path.exists():
            raise FileNotFoundError(f"{path} does not exist: augment_ray reads a Parquet file or folder, a "
                                    f"datasets.Dataset or a ray.data.Dataset.")
        return ray.data.read_parquet(str(path))
    from datasets import Dataset

    if isinstance(data, Dataset):
        # Its Arrow table as it is: ray.data.from_huggingface first asks `datasets` where the data's Parquet files
        # are, and for data read from a local file that lookup globs every folder under the working directory (a
        # virtual environment's 77k files: minutes).
        if data._indices is not None:  # after a select, shuffle or filter: the rows in their order
            data = data.flatten_indices()
        return ray.data.from_arrow(data.data.table)
    raise TypeError(f"augment_ray takes a ray.data.Dataset, a datasets.Dataset or a Parquet path, got "
                    f"{type(data).__name__}.")


def _augmenter_ref(augmenter: Any) -> str:
    """A folder or Hub id the actors load; an augmenter object is saved (components copied) to a temporary folder,
    which serves a single machine (on a cluster, save it to shared storage or the Hub and pass that)."""
    if isinstance(augmenter, (str, os.PathLike)):
        return str(augmenter)
    folder = Path(tempfile.mkdtemp(prefix="cfaug-ray-augmenter-"))
    augmenter.save_pretrained(folder, copy_components=True, overwrite=True)
    return str(folder)


def augment_ray(data: Any, augmenter: Any, *, concurrency: int = 1, batch_size: int = 64,
                num_cpus: float | None = None, num_gpus: float = 0, max_retries: int = 2,
                load_kwargs: dict[str, Any] | None = None, imports: tuple[str, ...] | list[str] = (),
                keep_trace: bool = False) -> Any:
    """The augmented rows of ``data`` as a lazy Ray Dataset, in the input's order.

    Args:
        data: a ``ray.data.Dataset``, a ``datasets.Dataset`` or a Parquet file or folder.
        augmenter: a saved augmenter's folder (readable on every node) or Hub id, or an augmenter object (saved to
            a temporary folder: one machine only).
        concurrency: actors in the pool; each loads the augmenter once.
        batch_size: rows per call of an actor (the augmenter's model batches its own inputs within it).
        num_cpus, num_gpus: resources per actor (a GPU fraction such as 0.25 packs four actors on a GPU). By
            default an actor asks for one CPU, less when the pool would otherwise take every CPU of the cluster:
            Ray Data's read and write tasks need one too, and a pool holding them all waits forever.
        max_retries: times Ray retries a batch whose call raised before the run fails naming its rows.
        load_kwargs: passed to ``Augmenter.from_pretrained`` (``revision``, component overrides, ...).
        imports: modules each actor imports before loading: those defining a method of your own (an augmenter
            object's module is added for you).
        keep_trace: keep the trace rows (one per input row whose original is not kept, with its outcome);
            `augment_to_parquet` uses them for the statistics.
    """
    ray = require("ray", "Ray scale-out")
    if not isinstance(concurrency, int) or concurrency < 1:
        raise ValueError(f"concurrency must be a positive integer, got {concurrency!r}.")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True  # the output keeps the input's order, as a local map does
    ctx.actor_task_retry_on_errors = True
    ds = _read(data)
    # An actor works on one block at a time, so a file read as one block would keep every other actor idle: split
    # the rows into enough blocks (in order) for the pool to share.
    blocks = max(1, min(-(-ds.count() // batch_size), concurrency * 16))
    if blocks > 1:
        ds = ds.repartition(blocks)
    if num_cpus is None:
        cpus = ray.cluster_resources().get("CPU", 1.0)
        num_cpus = min(1.0, max(cpus - 1.0, 0.5) / concurrency)
    imports = tuple(imports) + (() if isinstance(augmenter, (str, os.PathLike)) else (type(augmenter).__module__,))
    from .sharing.consent import granted

    # The endpoints allowed here go to the actors explicitly: on a cluster started before this call, an actor's
    # environment is the cluster's, not this process's.
    endpoints = tuple(granted())
    out = ds.map_batches(AugmentActor, fn_constructor_args=(_augmenter_ref(augmenter), load_kwargs, imports,
                                                            endpoints),
                         batch_format="pyarrow", batch_size=batch_size, concurrency=concurrency,
                         num_cpus=num_cpus, num_gpus=num_gpus or None, max_task_retries=max_retries)
    if keep_trace:
        return out
    from .provenance import TRACE_KIND

    return out.filter(lambda row: row["cf_kind"] != TRACE_KIND)


def augment_to_parquet(data: Any, augmenter: Any, output_dir: str | os.PathLike, *, overwrite: bool = False,
                       **kwargs: Any) -> Any:
    """Augment ``data`` on Ray (see `augment_ray` for the arguments), write the rows to Parquet files in
    ``output_dir`` and return the exact `AugmentationStats`, counted from the output's provenance.
    Read the result with ``datasets.load_dataset("parquet", data_dir=output_dir)``; an output of no rows is one
    empty Parquet file holding the columns (read it with pyarrow: ``datasets`` refuses a file of no rows).

    ``output_dir`` follows `cfaug_hf.sharing.folders.write_folder`: the files are written to a fresh folder beside it that
    takes its place when every row is written, so a rerun replaces the parts of the run before completely (no
    old part is left beside the new ones) and a failed run leaves ``output_dir`` as it was."""
    ray = require("ray", "Ray scale-out")
    from .augmenter import AugmentationError
    from .sharing.folders import check_writable, write_folder
    from .provenance import TRACE_KIND, AugmentationStats

    check_writable(output_dir, "parquet dataset", overwrite=overwrite)

    traced = augment_ray(data, augmenter, keep_trace=True, **kwargs)
    try:
        traced = traced.materialize()  # one pass over the model; Ray spills blocks to disk when they do not fit
    except ray.exceptions.RayError as err:
        raise AugmentationError(f"Ray could not augment every batch after {kwargs.get('max_retries', 2)} "
                                f"retries; the failing batch: {_cause(err)}") from err
    stats = AugmentationStats()
    for batch in traced.select_columns(["cf_is_counterfactual", "cf_kind", "cf_outcome"]).iter_batches(
            batch_format="pandas", batch_size=4096):
        for is_cf, kind, outcome in zip(batch["cf_is_counterfactual"], batch["cf_kind"], batch["cf_outcome"]):
            stats.rows_out += kind != TRACE_KIND
            if not is_cf:
                stats.rows_in += 1
                stats.events.update(list(outcome))
    with write_folder(output_dir, "parquet dataset", overwrite=overwrite, hidden_manifest=True) as tmp:
        traced.filter(lambda row: row["cf_kind"] != TRACE_KIND).write_parquet(str(tmp))
        if not any(tmp.glob("*.parquet")):  # no row at all: Ray writes no file, so write an empty one
            import pyarrow.parquet as pq

            pq.write_table(traced.schema().base_schema.empty_table(), str(tmp / "empty.parquet"))
    return stats


def _cause(err: BaseException) -> str:
    """The augmenter's own message (it names the batch's rows) from inside Ray's wrapping of the UDF's error."""
    import re

    seen, texts = set(), []
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        texts.append(str(err))
        err = err.__cause__ or err.__context__
    for text in texts:
        found = re.search(r"\w+ failed on a batch of [^\n]*", text)
        if found:
            return found.group(0)
    for text in texts:  # not the augmenter's wrapping: the last line of the first traceback that has one
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) > 1:
            return lines[-1].strip()
    return texts[0] if texts else "unknown error"
