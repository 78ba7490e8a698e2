from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ...components.protocols import EntityRecognizing, LabelScoring
from ...augmenter import Augmenter, Counterfactual, Example, RowResult
from ...components.checker import DEFAULT_CHECKER, resolve_checker
from ...components.editor import Editor, rank_by_checker
from ...text.entities import MarkupError, distinct_replacements, iob2_spans, mark_entities, relation_entities
from ...filters import (NERConstraintFilter, NLIConstraintFilter, REConstraintFilter,
                        TagConsistencyFilter)
from ...fingerprint import stable_hash
from ...generation import as_text_generator, screen_answer
from ...schema import SchemaError, TaskSchema
from .config import LLMConfig
from .paper import PAPER
from ...text.template import check_template, fill_template
from .prompts import DEMONSTRATIONS, TEMPLATE_FIELDS, build_prompt, parse_choice, template_values, cot_consistent, parse_list, parse_replacements, parse_text

__all__ = ["LLMCounterfactualAugmenter", "LLM_CF_CITATION", "balanced_target_probs"]

LLM_CF_CITATION = """@inproceedings{li2024prompting,
  title     = {Prompting Large Language Models for Counterfactual Generation: An Empirical Study},
  author    = {Li, Yongqi and Xu, Mayi and Miao, Xin and Zhou, Shen and Qian, Tieyun},
  booktitle = {Proceedings of the 2024 Joint International Conference on Computational Linguistics, Language
               Resources and Evaluation (LREC-COLING 2024)},
  year      = {2024},
  url       = {https://arxiv.org/abs/2305.14791}
}"""

_TASK_OF_SCHEMA = {"sentiment-analysis": "sentiment", "natural-language-inference": "nli",
                   "token-classification": "ner", "relation-extraction": "re"}
_CUE = {"sentiment": "Revised text", "re": "Revised sentence", "nli": "Revised hypotheses"}


def balanced_target_probs(label_counts: dict[str, int], options: dict[str, list[str]], *, iterations: int = 500
                          ) -> dict[str, dict[str, float]]:
    """Per source label, the probability of each target label such that the targets of the whole dataset are as
    uniform as the options allow (iterative proportional fitting of one weight per target).

    Examples:
        >>> p = balanced_target_probs({"a": 8, "b": 1, "c": 1}, {"a": ["b", "c"], "b": ["a", "c"], "c": ["a", "b"]})
        >>> round(p["b"]["a"], 2), round(p["a"]["b"], 2)
        (1.0, 0.5)
    """
    total = sum(label_counts.get(s, 0) for s in options) or 1
    targets = sorted({t for opts in options.values() for t in opts})
    weight = dict.fromkeys(targets, 1.0)
    probs: dict[str, dict[str, float]] = {}
    for _ in range(iterations):
        probs = {}
        for s, opts in options.items():
            z = sum(weight[t] for t in opts)
            probs[s] = {t: weight[t] / z for t in opts} if z else {}
        mass = {t: sum(label_counts.get(s, 0) / total * p.get(t, 0.0) for s, p in probs.items()) for t in targets}
        goal = 1.0 / len(targets)
        for t in targets:
            weight[t] = min(weight[t] * goal / mass[t], 1e6) if mass[t] > 0 else weight[t]
    return probs


class LLMCounterfactualAugmenter(Augmenter[LLMConfig]):
    """Counterfactuals written by a prompted LLM (Li et al. 2024), for sentiment, NLI, NER and relation extraction.

    Each input gets a prompt (task guidelines, demonstrations, the input and its target label) and the answer is
    parsed into a counterfactual:

    * **sentiment** (``TaskSchema.sentiment()``): the causal words are replaced to reach the target polarity;
    * **NLI** (``TaskSchema.nli()``): one prompt per input asks for a list of revised hypotheses, one per target
      relation; the premise is never edited;
    * **NER** (``TaskSchema.token_classification()``): the LLM proposes same-type replacements for each entity;
      they are substituted into the tokens and the IOB2 tags are recomputed (the label is kept: a person stays a
      person);
    * **relation extraction** (``TaskSchema.relation_extraction()``, SemEval ``<e1>``/``<e2>`` markup): the
      sentence is revised so the head and tail hold the target relation; markup the LLM dropped is put back when
      both entities are still there (``re:markup_restored``).

    The task's constraint filter runs first (`NERConstraintFilter`,
    `REConstraintFilter`, `NLIConstraintFilter`), then the
    consistency filter (``checker=``, a `LabelChecker`, by default the one shipped for sentiment
    and NLI, keeps counterfactuals it labels with their target; NER: ``tagger=``), then ``filters``.
    Every drop is counted per reason. Generation problems never raise: ``skipped:llm_error``, ``llm_empty``,
    ``llm_unparseable``, ``llm_meta``, ``llm_unchanged``, ``llm_truncated``, ``llm_missing_target`` (an NLI list
    shorter than its targets), ``llm_no_replacement`` (NER). The targets chosen are counted as ``target:<label>``
    events, so ``stats.by_prefix("target")`` is the target distribution.

    Args:
        llm: a text generator taking whole prompts: `local_llm` (SmolLM2, offline),
            `OpenAICompatibleLLM` (vLLM, TGI, llama.cpp, any OpenAI-style
            endpoint) or a callable ``prompts -> answers``.
        schema: the task schema (default `TaskSchema.sentiment`); the template follows its task.
        checker: the consistency check for sentiment, NLI and RE (a `LabelChecker`).
            ``"default"``: the checker shipped for the schema's task (sentiment, NLI; none for RE); a folder or Hub
            id; None: off.
        tagger: optional consistency tagger for NER (``token lists -> tag lists``).
        demo_encoder: with ``demo_pool``: a `BiEncoder` (or anything with
            ``encode(texts)`` returning normalised vectors) to pick the most similar demonstrations per input.
        config: an `LLMConfig`; keyword arguments override its fields.

    Examples:
        >>> from datasets import Dataset
        >>> llm = lambda prompts: ['Revised text: "The food was awful."' for _ in prompts]
        >>> aug = LLMCounterfactualAugmenter(llm)
        >>> out = aug.augment(Dataset.from_dict({"text": ["The food was great."], "label": ["positive"]}))
        >>> out[1]["text"], out[1]["label"], aug.stats.by_prefix("target")
        ('The food was awful.', 'negative', {'negative': 1})

    References:
        Yongqi Li, Mayi Xu, Xin Miao, Shen Zhou, Tieyun Qian. "Prompting Large Language Models for Counterfactual
        Generation: An Empirical Study". LREC-COLING 2024. https://arxiv.org/abs/2305.14791
    """

    method = "llm"  # its task, config and roles: the register_method call in __init__
    citation = LLM_CF_CITATION
    presets = {"paper": PAPER}

    def __init__(self, llm: Any, schema: TaskSchema | None = None, *,
                 checker: LabelScoring | str | None = DEFAULT_CHECKER,
                 tagger: EntityRecognizing | None = None,
                 demo_encoder: Any = None, config: LLMConfig | None = None, filters: Sequence[Any] | None = None,
                 **overrides: Any) -> None:
        super().__init__(schema or TaskSchema.preset(self.default_task), config, filters=filters, **overrides)
        cfg = self.config
        schema = self.schema
        if llm is None:
            raise TypeError("LLMCounterfactualAugmenter needs an llm: local_llm(), OpenAICompatibleLLM(...) or a "
                            "callable prompts -> answers.")
        task = cfg.task if cfg.task != "auto" else _TASK_OF_SCHEMA.get(schema.task)
        if task is None:
            raise ValueError(f"Unknown task {schema.task!r} for LLM counterfactuals; set task= to one of "
                             f"'sentiment', 'nli', 'ner', 're', or use TaskSchema.sentiment() / nli() / "
                             f"token_classification() / relation_extraction().")
        self.task = task
        if cfg.prompt_template is not None:
            if task not in TEMPLATE_FIELDS:
                raise ValueError(f"prompt_template is for the sentiment and NLI prompts; this augmenter's task is "
                                 f"{task!r}.")
            check_template(cfg.prompt_template, TEMPLATE_FIELDS[task])
        if isinstance(llm, str) and llm == "default":
            # The editor learned from human counterfactuals where one ships (it flips labels; a prompted 135M model
            # mostly does not), else the local instruction model prompted with the paper's templates.
            from ...components.editor import EDITOR_TASKS
            from ...components.editor import Editor as _Editor
            from ...components.llm import local_llm

            llm = _Editor.default(task) if task in EDITOR_TASKS else local_llm()
        _check_setup(task, schema, cfg, llm=llm, checker=checker, tagger=tagger, demo_encoder=demo_encoder)
        # NLI edits the hypothesis (the premise its context) or, with edit_side='premise', the premise
        self.edit_column = schema.text_columns[0 if task == "nli" and cfg.edit_side == "premise" else -1]
        if cfg.targets == "choose" and task != "re":
            raise ValueError(f"targets='choose' lets the LLM choose a relation (relation extraction); this "
                             f"augmenter's task is {task!r}.")
        self.target_mode = "none" if task == "ner" else cfg.targets if cfg.targets != "auto" else (
            "all" if len(schema.label_names) <= 3 else "balanced")
        checker = None if task == "ner" else resolve_checker(checker, schema, schema.label_names, "LLM augmenter")
        if cfg.until_flipped:
            if task != "sentiment":
                raise ValueError(f"until_flipped applies to the sentiment task (one text of sentences), not {task!r}: "
                                 f"NLI and RE edit one sentence, which the label-flip check already judges whole; "
                                 f"NER keeps its labels.")
            if checker is None:
                raise TypeError("until_flipped needs checker= (a LabelChecker, 'default' or a folder): it decides "
                                "when the whole edited text reads as the target label.")
        self.llm, self.checker, self.tagger, self.demo_encoder = llm, checker, tagger, demo_encoder
        self._pool_vectors: Any = None
        given = {type(f) for f in self.filters}
        first: list[Any] = []
        if cfg.constraints:
            constraint = {"ner": NERConstraintFilter, "re": REConstraintFilter, "nli": NLIConstraintFilter}.get(task)
            if constraint is not None and constraint not in given:
                first.append(NLIConstraintFilter(side=cfg.edit_side) if task == "nli" else constraint())
        if checker is not None:
            first.append(self.label_flip_filter(checker))
        if tagger is not None:
            first.append(TagConsistencyFilter(tagger))
        self.filters[:0] = first

    def components(self) -> dict[str, Any]:
        parts = {"llm": self.llm, "checker": self.checker, "demo_encoder": self.demo_encoder}
        if self.tagger is not None:
            parts["tagger"] = self.tagger
        return parts

    # ------------------------------------------------------------------------------------------------ targets
    def target_options(self, label: str) -> list[str]:
        exclude = set(self.config.exclude_targets)
        return [n for n in self.schema.label_names if n != label and n not in exclude]

    def choose_targets(self, ex: Example) -> list[str]:
        """The target labels of ``ex`` (seeded per row, so the same whatever the batch)."""
        options = self.target_options(ex.label)
        if self.target_mode == "all" or len(options) <= 1:
            return options
        rng = random.Random(stable_hash("llm-target", ex.seed))
        if self.target_mode == "random":
            return [rng.choice(options)]
        probs = self._balanced()[ex.label]
        return rng.choices(options, weights=[probs[t] for t in options])

    def _balanced(self) -> dict[str, dict[str, float]]:
        counts = self.config.label_counts
        if not counts:
            raise ValueError("targets='balanced' needs the data's label counts: call augmenter.augment(dataset) "
                             "(it counts them), or set label_counts={label: rows, ...} before dataset.map().")
        key = tuple(sorted(counts.items()))
        if getattr(self, "_balanced_key", None) != key:
            names = self.schema.label_names
            self._balanced_probs = balanced_target_probs(counts, {s: self.target_options(s) for s in names})
            self._balanced_key = key
        return self._balanced_probs

    def augment(self, dataset: Any, **kwargs: Any) -> Any:
        """`Augmenter.augment`; with ``targets='balanced'`` and no ``label_counts``, the dataset's own label
        counts are used for this call."""
        from datasets import Dataset

        counts = self.config.label_counts
        if self.target_mode != "balanced" or counts or not isinstance(dataset, Dataset):
            return super().augment(dataset, **kwargs)
        self._check_input(dataset)
        counts = Counter(self.schema.label_name(v) for v in dataset[self.schema.label_column])
        saved = self.config
        self.config = dataclasses.replace(saved, label_counts=dict(sorted(counts.items())))
        try:
            return super().augment(dataset, **kwargs)
        finally:
            self.config = saved

    # ---------------------------------------------------------------------------------------------- prompts
    def _row_text(self, row: dict[str, Any]) -> str:
        if self.task == "nli":
            return f"{row['premise']} {row['hypothesis']}"
        if self.task == "ner":
            return " ".join(row["tokens"])
        return row["text"]

    def demonstrations_for(self, rows: list[dict[str, Any]]) -> list[list[dict[str, Any]] | None]:
        """Per prompt row, the demonstrations: the fixed ones (None: built-in), or the most similar pool entries
        with the row's label."""
        cfg = self.config
        if cfg.demo_pool is None:
            if cfg.demonstrations is None and cfg.builtin_demonstrations is not None:
                return [DEMONSTRATIONS[self.task][:cfg.builtin_demonstrations]] * len(rows)
            return [cfg.demonstrations] * len(rows)
        import numpy as np

        pool = cfg.demo_pool
        if self._pool_vectors is None:
            self._pool_vectors = np.asarray(_encode(self.demo_encoder, [self._row_text(d) for d in pool]))
        queries = np.asarray(_encode(self.demo_encoder, [self._row_text(r) for r in rows]))
        sims = queries @ self._pool_vectors.T
        out = []
        for row, scores in zip(rows, sims):
            same = [i for i, d in enumerate(pool) if self.task == "ner" or d.get("label") == row.get("label")]
            chosen = sorted(same or range(len(pool)), key=lambda i: -scores[i])[:cfg.num_demonstrations]
            out.append([pool[i] for i in chosen])
        return out

    def _cut(self, text: str) -> tuple[str, str]:
        limit = self.config.max_input_chars
        if len(text) <= limit:
            return text, ""
        head = text[:limit].rsplit(" ", 1)[0]
        return head, text[len(head):]

    def prompts(self, rows: list[dict[str, Any]]) -> list[str]:
        """The prompt of each row: the user's ``prompt_template`` filled in, or the built-in guidelines and
        demonstrations."""
        cfg = self.config
        if cfg.prompt_template is not None:
            return [fill_template(cfg.prompt_template, template_values(self.task, row)) for row in rows]
        demos = self.demonstrations_for(rows)
        return [build_prompt(self.task, row, demonstrations=d, guidelines=cfg.guidelines, cot=cfg.cot,
                             entity_type_names=cfg.entity_type_names) for row, d in zip(rows, demos)]

    # ----------------------------------------------------------------------------------------- augmentation
    def augment_examples(self, examples: list[Example]) -> list[RowResult]:
        cfg = self.config
        results = [RowResult() for _ in examples]
        # (example, targets, prompt row, extra) for each prompt to send
        jobs = [job for i, (ex, res) in enumerate(zip(examples, results)) for job in self._jobs(i, ex, res)]
        if not jobs:
            return results
        if cfg.until_flipped or isinstance(self.llm, Editor):
            (self._until_flipped if cfg.until_flipped else self._edit)(examples, results, jobs)
            return results
        prompts = self.prompts([row for _, _, row, _ in jobs])
        seeds = [stable_hash("llm", examples[i].seed, *targets) % (2 ** 31) for i, targets, _, _ in jobs]
        gen = as_text_generator(self.llm, what="prompt").generate_with_info(prompts, seeds=seeds)
        for j, (i, targets, row, extra) in enumerate(jobs):
            ex, res = examples[i], results[i]
            if gen.error(j):
                res.events += ["skipped:llm_error"] * max(1, len(targets))
                continue
            answers = list(zip(gen.texts[j], gen.output_truncated[j]))
            row = {**row, "prompt": prompts[j]}  # for the shared echo check
            if self.task == "ner":
                self._ner(ex, res, answers, *extra)
            elif self.task == "nli":
                self._nli(ex, res, answers, row)
            elif "candidates" in row:
                self._chosen(ex, res, answers, row, extra)
            else:
                self._rewrite(ex, res, answers, row, extra)
        return results

    def _jobs(self, i: int, ex: Example, res: RowResult) -> list[tuple[int, list[str], dict[str, Any], Any]]:
        """The prompts one example needs: (its index, its targets, the prompt row, what the answer check needs);
        none when it is skipped (the reason goes to ``res``)."""
        cfg = self.config
        if self.task == "ner":
            tokens, tags = list(ex[self.edit_column]), ex.label.split()
            ents = iob2_spans(tokens, tags)
            if not ents:
                res.events.append("skipped:no_entities")
                return []
            return [(i, [], {"tokens": tokens, "entities": [{"span": e.text, "type": e.type} for e in ents]},
                     (tokens, tags, ents))]
        if self.task == "re":
            try:
                relation_entities(ex[self.edit_column])
            except MarkupError as err:
                where = f"row {ex.index}" if ex.index is not None else f"source {ex.source_id}"
                raise SchemaError(f"Column {self.edit_column!r} at {where}: {err}; relation extraction needs the "
                                  f"head marked <e1>...</e1> and the tail <e2>...</e2>.") from None
        choose = self.target_mode == "choose"
        targets = self.target_options(ex.label) if choose else self.choose_targets(ex)
        if not targets:
            res.events.append("skipped:no_target")
            return []
        if not choose:
            res.events += [f"target:{t}" for t in targets]
        if self.task == "nli" and not isinstance(self.llm, Editor):
            premise, hypothesis = (ex[c] for c in self.schema.text_columns)
            return [(i, targets, {"premise": premise, "hypothesis": hypothesis, "label": ex.label,
                                  "targets": targets}, "")]
        text, rest = self._cut(ex[self.edit_column])
        if rest and not cfg.until_flipped:  # the loop edits sentence by sentence: nothing is cut
            res.events.append("truncated:llm_input")
        if choose:  # one prompt: the LLM picks the target among the candidates
            return [(i, [], {"text": text, "label": ex.label, "candidates": targets}, rest)]
        return [(i, [t], {"text": text, "label": ex.label, "target": t}, rest) for t in targets]

    def _edit(self, examples: list[Example], results: list[RowResult], jobs: list[Any]) -> None:
        """Rewrite with a trained `Editor` (NLI: the hypothesis with the premise as its context, or with
        ``edit_side='premise'`` the other way round); its candidates go to the usual checks best first, as the
        checker rates them for the target."""
        other = next((c for c in self.schema.text_columns if c != self.edit_column), None)
        contexts = [examples[i][other] for i, _, _, _ in jobs] if self.task == "nli" else None
        texts, targets = [row["text"] for _, _, row, _ in jobs], [row["target"] for _, _, row, _ in jobs]
        seeds = [stable_hash("llm", examples[i].seed, *t) % (2 ** 31) for i, t, _, _ in jobs]
        outs = self.llm.edit(texts, targets, contexts=contexts, seeds=seeds)
        premise_side = self.task == "nli" and self.edit_column == self.schema.text_columns[0]
        ranked = rank_by_checker(outs, targets, self.checker, None if premise_side else contexts,
                                 hypotheses=contexts if premise_side else None)
        who = self.llm.fingerprint()[:16]  # which editor wrote the row, in its provenance
        for (i, _, row, rest), options in zip(jobs, ranked):
            if not options:  # every candidate was empty or the text itself
                results[i].events.append("skipped:llm_unchanged")
                continue
            self._rewrite(examples[i], results[i], [(c, False) for c, _ in options], {**row, "editor": who}, rest)

    def _until_flipped(self, examples: list[Example], results: list[RowResult], jobs: list[Any]) -> None:
        """Edit each row's label-carrying sentences, strongest first, until the checker reads the whole text as the
        target (`cfaug_hf.methods.until_flipped`): with an `Editor`, each sentence with its neighbours as context
        and the checker picking among the candidates; with a prompted LLM, the task's prompt on the sentence."""
        from ..until_flipped import edit_until_flipped

        cfg = self.config
        rows = [(i, targets[0]) for i, targets, _, _ in jobs]
        decision = self.flip_check(self.checker, margin=cfg.flip_margin, residual=cfg.residual)

        def seed(r: Any) -> int:
            return stable_hash("llm", examples[rows[r.row][0]].seed, r.target, r.position) % (2 ** 31)

        def propose(requests: list[Any]) -> list[tuple[str | None, dict[str, Any], str | None]]:
            if isinstance(self.llm, Editor):
                outs = self.llm.edit([r.text for r in requests], [r.target for r in requests],
                                     contexts=[r.context() for r in requests], seeds=[seed(r) for r in requests])
                ranked = rank_by_checker(outs, [r.target for r in requests], decision.reader)  # as units are read
                who = self.llm.fingerprint()[:16]
                answers = [[c for c, _ in options] for options in ranked]
                info = [{"editor": who, "candidates": len(options),
                         "checker_prob": round(options[0][1], 4) if options and options[0][1] is not None else None}
                        for options in ranked]
            else:
                prompts = self.prompts([{"text": r.text, "label": examples[rows[r.row][0]].label,
                                         "target": r.target} for r in requests])
                gen = as_text_generator(self.llm, what="prompt").generate_with_info(
                    prompts, seeds=[seed(r) for r in requests])
                answers, info = [], []
                for j, r in enumerate(requests):
                    parsed = [] if gen.error(j) else [parse_text(a, r.text, _CUE[self.task])[0] for a in gen.texts[j]]
                    answers.append([a for a in parsed if a])
                    info.append({})
            out: list[tuple[str | None, dict[str, Any], str | None]] = []
            for r, options, extra in zip(requests, answers, info):
                reasons = [screen_answer(c, r.text) for c in options]
                chosen = next((c for c, why in zip(options, reasons) if why is None), None)
                out.append((chosen, extra, None if chosen else (reasons[0] if reasons else "llm_unchanged")))
            return out

        outcomes = edit_until_flipped([examples[i][self.edit_column] for i, _ in rows],
                                      [examples[i].label for i, _ in rows], [t for _, t in rows],
                                      propose=propose, checker=self.checker, config=cfg, decision=decision)
        for (i, target), outcome in zip(rows, outcomes):
            if outcome.text is None:
                results[i].events.append(f"skipped:{outcome.reason}")
                results[i].notes.append(outcome.note(target))
                continue
            self._add(examples[i], results[i], {self.edit_column: outcome.text}, target, outcome.edit(target))

    def _fail(self, res: RowResult, reason: str | None, truncated: bool) -> None:
        reason = reason or "llm_unparseable"
        if truncated and reason in ("llm_unparseable", "llm_empty", "llm_missing_target"):
            reason = "llm_truncated"
        res.events.append(f"skipped:{reason}")

    def _add(self, ex: Example, res: RowResult, values: dict[str, Any], label: str, edit: dict[str, Any]) -> None:
        res.counterfactuals.append(Counterfactual(values, label, "llm", {k: v for k, v in edit.items()
                                                                          if v is not None}))
        res.events.append("produced:llm")

    def _rewrite(self, ex: Example, res: RowResult, answers: list[tuple[str, bool]], row: dict[str, Any],
                 rest: str) -> None:
        cfg = self.config
        target, original = row["target"], row["text"]
        kept: list[str] = []
        reason, cut_any = None, False
        for answer, cut in answers:
            text, reason = parse_text(answer, original, _CUE[self.task])
            cut_any = cut_any or cut
            if text is None:
                reason = screen_answer(answer, original, row.get("prompt")) or reason  # an echo is not "empty"
                continue
            reason = screen_answer(text, original, row.get("prompt"))
            if reason:
                continue
            edit: dict[str, Any] = {"target": target, "answer_truncated": True if cut else None,
                                    "editor": row.get("editor")}
            if self.task == "re":
                text, fixed = self._markup(text, original)
                if text is None:
                    reason = "llm_lost_entities"
                    continue
                if fixed:
                    res.events.append("re:markup_restored")
            if cfg.cot and cot_consistent(answer, text) is False:
                res.events.append("cot:inconsistent")
                edit["cot_inconsistent"] = True
            full = text + rest
            if full in kept:
                continue
            kept.append(full)
            self._add(ex, res, {self.edit_column: full}, target, edit)
            if len(kept) == cfg.per_target:
                break
        if not kept:
            self._fail(res, reason, cut_any)

    def _chosen(self, ex: Example, res: RowResult, answers: list[tuple[str, bool]], row: dict[str, Any],
                rest: str) -> None:
        """RE with the target chosen by the LLM: the first answer naming a candidate is revised for it."""
        reason = None
        for answer, cut in answers:
            target, reason = parse_choice(answer, row["candidates"])
            if target is not None:
                res.events.append(f"target:{target}")
                self._rewrite(ex, res, [(answer, cut)], {**row, "target": target}, rest)
                return
        self._fail(res, reason, any(cut for _, cut in answers))

    def _markup(self, text: str, original: str) -> tuple[str | None, bool]:
        """RE: the revision with the source's markup; put back when the LLM dropped it but kept both entities."""
        from ...text.entities import strip_markup

        try:
            relation_entities(text)
        except MarkupError:
            head, tail, _ = relation_entities(original)
            marked = mark_entities(strip_markup(text), head, tail)
            return marked, marked is not None
        return text, False

    def _nli(self, ex: Example, res: RowResult, answers: list[tuple[str, bool]], row: dict[str, Any]) -> None:
        cfg = self.config
        targets, hypothesis = row["targets"], row["hypothesis"]
        produced = dict.fromkeys(targets, 0)
        reasons: dict[str, str] = {}
        cut_any = False
        for answer, cut in answers:
            cut_any = cut_any or cut
            items = parse_list(_after_cue(answer, _CUE["nli"]), len(targets))
            for k, target in enumerate(targets):
                if produced[target] >= cfg.per_target:
                    continue
                if k >= len(items):
                    reasons.setdefault(target, "llm_missing_target")
                    continue
                text, reason = parse_text(items[k], hypothesis, "Hypothesis")
                if text is not None:
                    reason = screen_answer(text, hypothesis, row.get("prompt"))
                    text = None if reason else text
                elif not items[k].strip():
                    reason = screen_answer(answer, hypothesis, row.get("prompt")) or reason
                if text is None:
                    reasons.setdefault(target, reason or "llm_unparseable")
                    continue
                edit = {"target": target, "answer_truncated": True if cut else None}
                if cfg.cot and cot_consistent(answer, items) is False:
                    res.events.append("cot:inconsistent")
                    edit["cot_inconsistent"] = True
                self._add(ex, res, {self.edit_column: text}, target, edit)
                produced[target] += 1
        for target in targets:
            if not produced[target]:
                self._fail(res, reasons.get(target, "llm_unparseable"), cut_any)

    def _ner(self, ex: Example, res: RowResult, answers: list[tuple[str, bool]], tokens: list[str],
             tags: list[str], ents: list[Any]) -> None:
        cfg = self.config
        proposals: list[list[str]] = [[] for _ in ents]
        cut_any = False
        for answer, cut in answers:
            cut_any = cut_any or cut
            for k, words in enumerate(parse_replacements(answer, [e.text for e in ents])):
                for w in words:
                    w = " ".join(w.split())
                    if _usable(w, ents[k].text) and w not in proposals[k]:
                        proposals[k].append(w)
        swaps = ({k: p[c] for k, p in enumerate(proposals) if len(p) > c} for c in range(cfg.per_target))
        made = 0
        for new_tokens, new_tags, replaced in distinct_replacements(tokens, tags, swaps):
            made += 1
            self._add(ex, res, {self.edit_column: new_tokens}, " ".join(new_tags), {"replaced": replaced})
        if not made:
            self._fail(res, "llm_no_replacement" if any(a.strip() for a, _ in answers) else "llm_empty", cut_any)


def _usable(word: str, original: str) -> bool:
    """An entity replacement worth substituting: not empty, not the entity itself, no markup, at most 8 words."""
    return bool(word) and word.casefold() != original.casefold() and "<" not in word and len(word.split()) <= 8 \
        and any(ch.isalnum() for ch in word)


def _after_cue(answer: str, cue: str) -> str:
    """What follows the last answer cue, when the answer repeats it (chain of thought puts reasoning before)."""
    if not isinstance(answer, str):
        return ""
    at = answer.lower().rfind(cue.lower())
    return answer[at + len(cue):] if at >= 0 else answer


def _encode(encoder: Any, texts: list[str]) -> Any:
    out = encoder.encode(texts)
    return out.detach().cpu().numpy() if hasattr(out, "detach") else out


def _check_setup(task: str, schema: TaskSchema, cfg: LLMConfig, *, llm: Any, checker: Any, tagger: Any,
                 demo_encoder: Any) -> None:
    """Refuse a template, schema, config and parts that do not fit together, naming the argument."""
    want = {"nli": 2}.get(task, 1)
    if len(schema.text_columns) != want:
        raise SchemaError(f"The {task!r} template reads {want} text column(s), got {list(schema.text_columns)}.")
    if (task == "ner") != schema.is_token_level:
        raise SchemaError(f"The {task!r} template needs a "
                          f"{'token-classification' if task == 'ner' else 'row-level'} schema, got "
                          f"task {schema.task!r}.")
    if cfg.cot and task == "ner":
        raise ValueError("cot=True: the NER template has no chain-of-thought variant (the LLM only proposes "
                         "replacements).")
    for name in [*cfg.exclude_targets, *(cfg.label_counts or {})]:
        if name not in schema.label_names:
            raise SchemaError(f"Label {name!r} (in exclude_targets or label_counts) is not in the schema's "
                              f"labels {list(schema.label_names)}.")
    if cfg.demo_pool is not None and demo_encoder is None:
        raise TypeError("demo_pool needs demo_encoder= (a BiEncoder, or anything with encode(texts)) to pick "
                        "the most similar demonstrations.")
    if cfg.demo_pool is not None and not cfg.demo_pool:
        raise ValueError("demo_pool is empty.")
    if task == "ner" and checker is not None and not (isinstance(checker, str) and checker == DEFAULT_CHECKER):
        raise TypeError("checker= checks one label per row; for NER pass tagger= (token lists -> tags).")
    if isinstance(llm, Editor) and task == "ner":
        raise TypeError("An Editor rewrites a text toward a label; NER counterfactuals need a prompted LLM "
                        "(local_llm() or OpenAICompatibleLLM) that proposes entity replacements.")
    if tagger is not None and task != "ner":
        raise TypeError("tagger= is the NER consistency check; for other tasks pass checker=.")
    if cfg.edit_side == "premise":
        edits = getattr(getattr(llm, "config", None), "task", None)
        if task != "nli" or not isinstance(llm, Editor) or edits == "nli" or cfg.until_flipped:
            raise ValueError(f"edit_side='premise' needs the NLI task and an Editor trained on revised premises "
                             f"(task 'nli-premise': scripts/build_editors.py --task nli-premise), without "
                             f"until_flipped; got task {task!r}, "
                             f"{'an editor of ' + repr(edits) if isinstance(llm, Editor) else type(llm).__name__}"
                             f"{', until_flipped' if cfg.until_flipped else ''}.")
