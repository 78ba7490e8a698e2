"""The main job: CrossAug on the embedded FEVEROUS sample with the negative-claim generator shipped in the package.

    cfaug demo --out runs/demo [--rows 300]

1. loads ``rows`` claims (default 100, a seeded sample) of the 300-row FEVEROUS sample shipped in the package
   (CC BY-SA 3.0);
2. loads the shipped negative-claim generator (SmolLM2-135M-Instruct + a LoRA adapter learned from VitaminC claim
   pairs), or the one ``--retrain`` trained into ``OUT/generator``;
3. augments the sample with CrossAug (``dataset.map(augmenter, batched=True)``);
4. writes ``OUT/original`` and ``OUT/augmented`` (``save_to_disk``), ``OUT/augmented.jsonl``, ``OUT/stats.json`` and
   ``OUT/report.md``, and prints a summary. ``cfaug report OUT/original OUT/augmented --out OUT/report`` then
   measures the augmentation.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from .augmenter import AugmentationStats
from .verbosity import get_logger

__all__ = ["run_demo", "format_examples"]

logger = get_logger(__name__)


#: What each CrossAug kind is, in one line, beside its label change.
KIND_NOTES = {"c'+e": "the negated claim with the original evidence: now refuted",
              "c+e'": "the original claim with the edited evidence: now refuted",
              "c'+e'": "claim and evidence edited alike: still supported"}


def format_examples(dataset: Any, n: int = 3, kinds: tuple[str, ...] = ("c+e'", "c'+e", "c'+e'")) -> list[str]:
    """Readable before/after blocks for up to ``n`` counterfactuals: label flips first (evidence edits, then
    negated claims), then the consistent pairs whose label stays."""
    picked: list[dict] = []
    for kind in kinds:
        for row in dataset.filter(lambda k: k == kind, input_columns="cf_kind"):
            if len(picked) >= n:
                break
            if all(p["cf_source_id"] != row["cf_source_id"] for p in picked):
                picked.append(row)
    blocks = []
    for row in picked:
        edit = json.loads(row["cf_edit"])
        note = KIND_NOTES.get(row["cf_kind"])
        lines = [f"[{row['cf_kind']}] label {row['cf_original_label']} -> {row['label']}"
                 + (f"  ({note})" if note else "")]
        if "claim" in edit:
            lines.append(f"  claim edit:    {edit['claim']['old']!r} -> {edit['claim']['new']!r}")
        lines.append(f"  claim:         {row['claim']}" + ("  (unchanged)" if "claim" not in edit else ""))
        if "evidence" in edit:
            ev = edit["evidence"]
            pieces = row["evidence"] if isinstance(row["evidence"], list) else [row["evidence"]]
            piece = pieces[ev["piece"]]
            lo, hi = max(0, ev["start"] - 60), ev["start"] + len(ev["new"]) + 60
            # c+e': the claim's negation was carried into the evidence; the claim itself is as it was
            carried = " (the claim's negation, applied to the evidence)" if "from_claim" in edit else ""
            lines.append(f"  evidence edit: {ev['old']!r} -> {ev['new']!r}{carried}")
            lines.append(f"  evidence:      ...{piece[lo:hi]}...")
        blocks.append("\n".join(lines))
    return blocks


#: The kind of folder the demo writes (see cfaug_hf.sharing.folders.write_folder).
_KIND = "demo output"


def run_demo(out: str | Path = "runs/demo", *, generator_steps: int = 60, retrain: bool = False,
             batch_size: int = 32, seed: int = 0, backend: str = "auto", rows: int = 100,
             overwrite: bool = False) -> dict[str, Any]:
    """Run the main job and return its summary (also written to ``out/stats.json``). ``backend``: how the generator
    decodes (see `Generator.use_backend`): ``auto`` is CTranslate2 in float32 when installed (the same
    outputs, about 1.5x faster on CPU), else transformers. ``rows``: claims augmented, a seeded sample of the 300
    shipped (all 300 take about three times as long).

    ``out`` follows the rules of `cfaug_hf.sharing.folders.write_folder`: a new or empty folder, or one an earlier demo
    wrote (its files are replaced, files you added are kept); a folder holding anything else is refused unless
    ``overwrite=True``. Everything is written to a temporary folder first, so a failed or interrupted run changes
    nothing there."""
    from .data import load_feverous_sample
    from .methods.crossaug import CrossAugAugmenter
    from .schema import TaskSchema
    from .sharing.folders import check_writable, save_dataset, write_folder

    out = Path(out)
    check_writable(out, _KIND, overwrite=overwrite)  # refused before the generator trains, not after
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    dataset = _sample(load_feverous_sample(), rows, seed)
    print(f"[1/3] Loaded the embedded FEVEROUS sample: {len(dataset)} rows "
          f"({sum(lab == 'SUPPORTS' for lab in dataset['label'])} SUPPORTS).", flush=True)

    generator, trained = _generator(out / "generator", retrain, generator_steps, seed)
    generator.use_backend(backend)
    timings["generator_s"] = round(time.perf_counter() - t0, 1)

    engine = generator.backend.describe() if generator.backend is not None else {"engine": "transformers"}
    print(f"[3/3] Augmenting with CrossAug on {engine['engine']}"
          + (f" ({engine['compute_type']})" if "compute_type" in engine else "") +
          f" (beam search, width {generator.config.num_beams}; the first of "
          f"{generator.config.num_return_sequences} candidates that is a real negation; kept when the shipped flip "
          f"checker labels it as intended).", flush=True)
    t1 = time.perf_counter()
    # The library's defaults go beyond the paper in two ways, both saved with the generator or the augmenter: all
    # five beams are returned, and CrossAug uses the first that is a real negation, not a deletion or a change of a
    # word's form (a claim with a clause dropped, or "listings" -> "lists", is still supported). The shipped flip
    # checker (CrossAug's default) then drops counterfactuals whose label it does not confirm.
    augmenter = CrossAugAugmenter(generator, TaskSchema.fact_verification(id_column="id"), seed=seed)
    augmented = augmenter.augment(dataset, batch_size=batch_size, load_from_cache_file=False)
    timings["augment_s"] = round(time.perf_counter() - t1, 1)
    stats: AugmentationStats = augmenter.stats

    examples = format_examples(augmented)
    summary = {"dataset": f"cfaug_hf embedded FEVEROUS sample ({len(dataset)} of 300 rows, CC BY-SA 3.0)",
               "generator": generator.get_config_dict(), "backend": engine, "augmenter": augmenter.get_config_dict(),
               "stats": stats.to_dict(), "timings": timings}
    report = _report(generator, augmenter, stats, examples)
    with write_folder(out, _KIND, overwrite=overwrite) as tmp:
        if trained is not None:  # the trained generator stays with the run that uses it
            trained.save_pretrained(tmp / "generator")
        save_dataset(dataset, tmp / "original")
        save_dataset(augmented, tmp / "augmented")
        augmented.to_json(str(tmp / "augmented.jsonl"), force_ascii=False)
        (tmp / "stats.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
        (tmp / "report.md").write_text("\n".join(report))

    _print_summary(out, stats, examples, len(augmented), timings["generator_s"] + timings["augment_s"])
    return summary


def _sample(dataset: Any, rows: int, seed: int) -> Any:
    """A seeded sample of ``rows`` rows (all of them when there are no more)."""
    if not isinstance(rows, int) or isinstance(rows, bool) or rows < 1:
        raise ValueError(f"rows must be a whole number >= 1, got {rows!r}.")
    if rows < len(dataset):
        import random

        dataset = dataset.select(sorted(random.Random(seed).sample(range(len(dataset)), rows)))
    return dataset


def _generator(gen_dir: Path, retrain: bool, steps: int, seed: int) -> tuple[Any, Any]:
    """The negative-claim generator, and the same object when this run trained or reused its own (saved with the
    run), else None: the shipped one."""
    from .components.generator import Generator
    from .methods.crossaug.recipes import default_claim_generator, negative_claim_generator

    if retrain:
        print(f"[2/3] Training a negative-claim generator: SmolLM2-135M-Instruct + LoRA, {steps} steps "
              "of 16 VitaminC claim pairs (both directions).", flush=True)
        generator = negative_claim_generator(max_steps=steps, seed=seed)
        return generator, generator
    if gen_dir.is_dir():
        print(f"[2/3] Reusing the generator trained earlier in {gen_dir} (pass --retrain to train it again).",
              flush=True)
        generator = Generator.from_pretrained(gen_dir)
        return generator, generator
    print("[2/3] Loading the negative-claim generator shipped in the package: SmolLM2-135M-Instruct + a LoRA "
          "adapter learned from VitaminC claim pairs (--retrain trains your own).", flush=True)
    return default_claim_generator(), None


def _report(generator: Any, augmenter: Any, stats: AugmentationStats, examples: list[str]) -> list[str]:
    """The lines of ``report.md``."""
    return ["# CrossAug on the embedded FEVEROUS sample", "",
            f"Generator: {generator.base_model} "
            f"({'LoRA adapter' if generator.get_config_dict()['adapter'] else 'full weights'}"
            f"), trained {generator.training_info.get('global_step', '?')} steps, "
            f"final train loss {generator.training_info.get('train_loss', '?')}.", "",
            f"Checker: {augmenter.checker!r} (kept a counterfactual only when it predicts its label)."
            if augmenter.checker is not None else "Checker: none.", "",
            "## Counts", "", *[f"- {line.strip()}" for line in stats.summary_lines()], "",
            "## Examples", "", *[f"```\n{b}\n```" for b in examples], "",
            "Data: FEVEROUS (Aly et al., 2021), CC BY-SA 3.0; method: CrossAug (Lee et al., 2021).", ""]


def _print_summary(out: Path, stats: AugmentationStats, examples: list[str], rows: int, seconds: float) -> None:
    print()
    print("Summary")
    print("-------")
    for line in stats.summary_lines():
        print(line)
    print()
    print("Example counterfactuals")
    for block in examples:
        print(block)
    print()
    print(f"Wrote {out / 'augmented'} ({rows} rows), original/, augmented.jsonl, stats.json and report.md in "
          f"{seconds:.0f} s.")
    print()
    print("Next:")
    print(f"  cfaug report {out / 'original'} {out / 'augmented'} --out {out / 'report'} --no-models"
          "   # what the augmentation did")
    print("  cfaug augment YOUR_DATA.jsonl --method crossaug --out runs/mine"
          "   # your claims (claim, evidence, label)")
    print("  cfaug augment --method NAME --help   # NAME: crossaug, core, llm, race, icda, cfgen")
