from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ...components.protocols import LabelScoring
from ...augmenter import Augmenter, Counterfactual, Example, RowResult
from ...components.checker import DEFAULT_CHECKER, resolve_checker
from ...components.editor import DEFAULT_EDITOR, EDITOR_TASKS, Editor, candidates, rank_by_checker, resolve_editor
from ...fingerprint import stable_hash
from ...generation import as_text_generator, screen_answer
from ...schema import SchemaError, TaskSchema
from .paper import PAPER
from .config import COREConfig
from ...text.template import check_template, fill_template
from .prompts import TEMPLATE_FIELDS, build_prompt, keywords, parse_answer, template_values

__all__ = ["COREAugmenter", "CORE_CITATION"]

CORE_CITATION = """@inproceedings{dixit2022core,
  title     = {{CORE}: A Retrieve-then-Edit Framework for Counterfactual Data Generation},
  author    = {Dixit, Tanay and Paranjape, Bhargavi and Hajishirzi, Hannaneh and Zettlemoyer, Luke},
  booktitle = {Findings of the Association for Computational Linguistics: EMNLP 2022},
  pages     = {2964--2984},
  year      = {2022},
  url       = {https://arxiv.org/abs/2210.04873}
}"""


class COREAugmenter(Augmenter[COREConfig]):
    """CORE (Dixit et al. 2022): retrieve label-flipping excerpts with CF-DPR, then let an LLM editor borrow their
    words to write a minimal counterfactual.

    For each row and each target label: the query (the text; premise ``[SEP]`` hypothesis for NLI) is searched in
    ``index`` with ``retriever`` (top ``top_k``, de-duplicated), optionally re-ranked by ``reranker`` (a
    `LabelChecker` over (query, excerpt) whose last label means "counterfactual"); keywords from
    the best ``keyword_excerpts`` excerpts go into a few-shot prompt with the instructions and the target label;
    the editor's answer is parsed into the edited text (NLI edits the hypothesis). Rows the editor could not serve
    are counted: ``skipped:llm_error`` (the request failed), ``skipped:llm_unparseable``, ``skipped:llm_unchanged``.

    Ablations: ``mode="retrieval_only"`` emits the best excerpt itself (CF-DPR counterfactuals);
    ``mode="editor_only"`` prompts without retrieval or keywords.

    Input columns: the schema's text columns (sentiment / text: one text; NLI: premise, hypothesis) and label.

    Args:
        editor: ``"default"``: the `Editor` shipped for the task (sentiment, NLI: SmolLM2-135M
            with an adapter learned from CAD), which reads the retrieved keywords and the context and writes
            candidates the checker chooses among; a trained Editor or its folder / Hub id; or a text generator taking
            whole few-shot prompts: `local_llm`,
            `OpenAICompatibleLLM` (an endpoint LLM), or a callable
            ``prompts -> answers``. Not needed with ``mode="retrieval_only"``.
        schema: the task schema (default `TaskSchema.sentiment`).
        retriever, index: a `BiEncoder` and the `CorpusIndex` it built. ``"default"``: the ones shipped for
            sentiment and NLI (`cfaug_hf.methods.core.shipped`: CF-DPR as MiniLM + LoRA trained on CAD's training
            pairs, over CAD's original training texts; the index is built on first use and cached); other tasks
            need their own. Not needed with ``mode="editor_only"``.
        reranker: optional cross-encoder re-ranker.
        checker: the label-flip check: keeps counterfactuals this `LabelChecker` labels with
            their target. ``"default"``: the checker shipped for the schema's task (sentiment: CAD IMDb; NLI:
            CAD-SNLI), none for other tasks; a folder or Hub id; None: off.
        sentence_scorer: with ``edit_sentences``: ``(sentences, label) -> scores`` (higher: the sentence carries
            ``label`` more); defaults to the checker's probability of the label.
        config: a `COREConfig`; keyword arguments override its fields.

    Examples:
        >>> from datasets import Dataset
        >>> from cfaug_hf.components.retriever import BiEncoder, CorpusIndex
        >>> from cfaug_hf.testing import tiny_encoder
        >>> enc = BiEncoder(tiny_encoder()[0], tiny_encoder()[0], tiny_encoder()[1])
        >>> index = CorpusIndex.build(enc, ["A truly wonderful cast.", "Sharp and moving.", "Dull and slow."])
        >>> editor = lambda prompts: ["Rewritten review: A wonderful, moving film." for _ in prompts]
        >>> aug = COREAugmenter(editor, retriever=enc, index=index)
        >>> out = aug.augment(Dataset.from_dict({"text": ["A dull, slow film."], "label": ["negative"]}))
        >>> out[1]["text"], out[1]["label"], out[1]["cf_kind"]
        ('A wonderful, moving film.', 'positive', 'core')

    References:
        Tanay Dixit, Bhargavi Paranjape, Hannaneh Hajishirzi, Luke Zettlemoyer. "CORE: A Retrieve-then-Edit
        Framework for Counterfactual Data Generation". Findings of EMNLP 2022. https://arxiv.org/abs/2210.04873
    """

    method = "core"  # its task, config and roles: the register_method call in __init__
    presets = {"paper": PAPER}
    citation = CORE_CITATION

    def __init__(self, editor: Any = DEFAULT_EDITOR, schema: TaskSchema | None = None, *, retriever: Any = "default",
                 index: Any = "default", reranker: LabelScoring | None = None,
                 checker: LabelScoring | str | None = DEFAULT_CHECKER,
                 sentence_scorer: Any = None, config: COREConfig | None = None, filters: Sequence[Any] | None = None,
                 **overrides: Any) -> None:
        super().__init__(schema or TaskSchema.preset(self.default_task), config, filters=filters, **overrides)
        cfg = self.config
        schema = self.schema
        self.task = cfg.task if cfg.task != "auto" else (
            "nli" if schema.task == "natural-language-inference" else
            "sentiment" if schema.task == "sentiment-analysis" else "text")
        if self.task == "nli":
            if len(schema.text_columns) != 2:
                raise SchemaError(f"CORE's NLI template needs (premise, hypothesis) columns, got "
                                  f"{list(schema.text_columns)}.")
            self.edit_column = schema.text_columns[1]
        else:
            if len(schema.text_columns) != 1:
                raise SchemaError(f"CORE's {self.task!r} template edits one text column, got {list(schema.text_columns)};"
                                  f" use task='nli' for sentence pairs.")
            self.edit_column = schema.text_columns[0]
        if cfg.prompt_template is not None:
            check_template(cfg.prompt_template, TEMPLATE_FIELDS["nli" if self.task == "nli" else "text"])
        if isinstance(editor, str) and editor == DEFAULT_EDITOR:
            editor = None if cfg.mode == "retrieval_only" or self.task not in EDITOR_TASKS else \
                resolve_editor(editor, self.task, "CORE")
        elif isinstance(editor, (str, os.PathLike)):
            editor = resolve_editor(str(editor), self.task, "CORE")
        if cfg.mode != "retrieval_only" and editor is None:
            raise TypeError(f"COREAugmenter(mode={cfg.mode!r}) needs an editor: a trained Editor (shipped for "
                            f"{list(EDITOR_TASKS)}; this is task {self.task!r}), local_llm(), "
                            f"OpenAICompatibleLLM(...) or a callable prompts -> answers.")
        if cfg.mode == "editor_only":
            retriever = index = None
        else:
            retriever, index = self._retrieval(retriever, index)
        self.editor, self.retriever, self.index, self.reranker = editor, retriever, index, reranker
        self.checker = checker = resolve_checker(checker, schema, schema.label_names, "CORE")
        if checker is not None:
            self.filters.insert(0, self.label_flip_filter(checker))
        if cfg.until_flipped:
            if self.task == "nli":
                raise ValueError("until_flipped applies to sentiment and text tasks; NLI edits the one hypothesis "
                                 "sentence, which the label-flip check already judges with its premise.")
            if checker is None:
                raise TypeError("until_flipped needs checker= (a LabelChecker, 'default' or a folder): it decides "
                                "when the whole edited text reads as the target label.")
        if cfg.edit_sentences:
            if self.task == "nli":
                raise ValueError("edit_sentences applies to sentiment and text tasks; NLI edits the hypothesis.")
            if sentence_scorer is None and checker is None:
                raise TypeError("edit_sentences needs sentence_scorer= (sentences, label -> scores) or checker= to "
                                "pick the sentences that carry the label.")
        self.sentence_scorer = sentence_scorer
        neutral = [n for n in schema.label_names if n.casefold() == cfg.neutral_label.casefold()]
        self.neutral = neutral[0] if self.task == "nli" and neutral else None


    def _retrieval(self, retriever: Any, index: Any) -> tuple[Any, Any]:
        """The retriever and index, the shipped ones where ``"default"`` (sentiment and NLI only)."""
        from . import shipped

        defaults = [name for name, value in (("retriever", retriever), ("index", index)) if _is_default(value)]
        if defaults and self.task not in shipped.SHIPPED_TASKS:
            raise TypeError(f"COREAugmenter(mode={self.config.mode!r}) needs retriever= (a BiEncoder) and index= "
                            f"(the CorpusIndex it built) for task {self.task!r}: CORE ships them for "
                            f"{list(shipped.SHIPPED_TASKS)} only; mode='editor_only' runs without them.")
        if _is_default(index) and retriever is not None and not _is_default(retriever):
            raise TypeError("COREAugmenter: index='default' is the shipped retriever's index of its corpus; with your "
                            "own retriever=, pass index= a CorpusIndex it built (CorpusIndex.build(retriever, texts)).")
        if _is_default(retriever):
            retriever = shipped.shipped_retriever(self.task)
        if retriever is None or index is None:
            raise TypeError(f"COREAugmenter(mode={self.config.mode!r}) needs retriever= (a BiEncoder) and index= (the "
                            f"CorpusIndex it built), or 'default' for both; mode='editor_only' runs without them.")
        if not _is_default(index):
            index.check_encoder(retriever)
        return retriever, index

    @property
    def index(self) -> Any:
        """The `CorpusIndex` searched; the shipped one is built (or read from the cache) when first needed, so
        constructing the augmenter stays quick."""
        if _is_default(self._index):
            from .shipped import shipped_index

            self._index = shipped_index(self.task)
        return self._index

    @index.setter
    def index(self, value: Any) -> None:
        self._index = value
    def pick_sentences(self, text: str, label: str) -> tuple[list[str], list[int]]:
        """The text's sentences and the positions of the ``edit_sentences`` that carry ``label`` most."""
        from ...text.sentences import split_sentences

        sentences = split_sentences(text)
        n = self.config.edit_sentences
        if len(sentences) <= n:
            return sentences, list(range(len(sentences)))
        if self.sentence_scorer is not None:
            scores = list(self.sentence_scorer(sentences, label))
        else:
            scores = list(self.checker.predict_proba(sentences)[:, self.checker.label_id(label)])
        top = sorted(range(len(sentences)), key=lambda i: -scores[i])[:n]
        return sentences, sorted(top)

    # ------------------------------------------------------------------------------------------------- planning
    def target_labels(self, ex: Example) -> list[str]:
        """The labels ``ex`` gets counterfactuals for (empty: passed through)."""
        cfg = self.config
        options = [n for n in self.schema.label_names if n != ex.label and n != self.neutral]
        if ex.label == self.neutral:
            return []
        if cfg.targets == "one" and len(options) > 1:
            return [options[stable_hash("core-target", ex.seed) % len(options)]]
        return options

    def query(self, ex: Example) -> str:
        """The text searched for counterfactual excerpts: the text, or premise [SEP] hypothesis."""
        if self.task == "nli":
            premise, hypothesis = (ex[c] for c in self.schema.text_columns)
            sep = getattr(self.retriever.tokenizer, "sep_token", None) or "|"
            return f"{premise} {sep} {hypothesis}"
        return ex[self.edit_column]

    def _own_texts(self, ex: Example) -> list[str]:
        return [p for c in self.schema.text_columns for p in self.schema.pieces(ex[c])]

    def _cut(self, text: str) -> tuple[str, bool]:
        limit = self.config.max_input_chars
        if len(text) <= limit:
            return text, False
        return text[:limit].rsplit(" ", 1)[0], True

    def _row(self, ex: Example) -> tuple[dict[str, Any], bool]:
        if self.task == "nli":
            premise, hypothesis = (ex[c] for c in self.schema.text_columns)
            return {"premise": premise, "hypothesis": hypothesis, "label": ex.label}, False
        text, cut = self._cut(ex[self.edit_column])
        return {"text": text, "label": ex.label}, cut

    def retrieve(self, queries: list[str], exclude: Sequence[Sequence[str]] | None = None) -> list[list[dict[str, Any]]]:
        """Top-k excerpts per query, re-ranked when a re-ranker is set (best first). Excerpts that are one of the
        row's own texts (``exclude``, per query; default the query itself) are dropped: a corpus built from the same
        data holds them (an NLI premise retrieved as the new hypothesis would be entailed, not contradicted)."""
        cfg = self.config
        hits = self.index.search(self.retriever, queries, k=cfg.top_k)
        own = [{_norm(q)} for q in queries] if exclude is None else [{_norm(t) for t in texts} for texts in exclude]
        hits = [[h for h in row if _norm(h["text"]) not in mine] for row, mine in zip(hits, own)]
        if self.reranker is None:
            return hits
        flat = [(q, h) for q, row in zip(queries, hits) for h in row]
        if not flat:
            return hits
        probs = self.reranker.predict_proba([q for q, _ in flat], [h["text"] for _, h in flat])[:, -1]
        for (_, h), p in zip(flat, probs):
            h["rerank"] = float(p)
        return [sorted(row, key=lambda h: -h["rerank"]) for row in hits]

    # ---------------------------------------------------------------------------------------------- augmentation
    def augment_examples(self, examples: list[Example]) -> list[RowResult]:
        cfg = self.config
        results = [RowResult() for _ in examples]
        todo = []
        for ex, res in zip(examples, results):
            targets = self.target_labels(ex)
            if targets:
                todo.append((ex, res, targets))
            else:
                res.events.append("skipped:label_not_augmented")
        if not todo:
            return results
        if cfg.until_flipped:
            self._until_flipped(todo)
            return results
        units, split = self._units(todo)
        jobs = self._jobs(units, todo)
        edits: dict[tuple[int, str], list[tuple[int | None, str, dict[str, Any]]]] = {}
        failures: dict[tuple[int, str], list[str]] = {}
        if cfg.mode == "retrieval_only":
            for (t, pos, _), target, best, _ in jobs:
                edits.setdefault((t, target), []).append((pos, best[0], {"excerpts": best[:1]}))
        elif isinstance(self.editor, Editor):
            self._edit_with_editor(jobs, todo, split, edits, failures)
        else:
            self._edit_with_prompts(jobs, todo, edits, failures)
        for t, (ex, res, targets) in enumerate(todo):
            for target in targets:
                done = edits.get((t, target))
                if done:
                    self._emit_edit(ex, res, target, done, split.get(t), failures.get((t, target)))
                elif failures.get((t, target)):
                    res.events.append(f"skipped:{failures[(t, target)][0]}")
        return results

    def _until_flipped(self, todo: list[Any]) -> None:
        """Edit each row's label-carrying sentences, strongest first, until the checker reads the whole text as the
        target (`cfaug_hf.methods.until_flipped`); each round's sentences are edited as in ``edit_sentences``
        mode (retrieval per sentence in ``core`` mode, the neighbours as the editor's context)."""
        from ..until_flipped import edit_until_flipped

        cfg = self.config
        flat = [(t, target) for t, (_, _, targets) in enumerate(todo) for target in targets]
        decision = self.flip_check(self.checker, margin=cfg.flip_margin, residual=cfg.residual)

        def propose(requests: list[Any]) -> list[tuple[str | None, dict[str, Any], str | None]]:
            # each request is its own one-target row here, so the edits and failures come back keyed by it
            sub = [(todo[flat[r.row][0]][0], RowResult(), [r.target]) for r in requests]
            units = [(k, r.position, r.text) for k, r in enumerate(requests)]
            split = {k: r.units for k, r in enumerate(requests)}
            edits: dict[tuple[int, str], list[Any]] = {}
            failures: dict[tuple[int, str], list[str]] = {}
            jobs = self._jobs(units, sub)
            if isinstance(self.editor, Editor):  # candidates ranked by what reads units in the residual check
                self._edit_with_editor(jobs, sub, split, edits, failures, ranker=decision.reader)
            else:
                self._edit_with_prompts(jobs, sub, edits, failures)
            out: list[tuple[str | None, dict[str, Any], str | None]] = []
            for k, r in enumerate(requests):
                done = edits.get((k, r.target))
                out.append((done[0][1], done[0][2], None) if done else
                           (None, {}, (failures.get((k, r.target)) or ["no_retrieval"])[0]))
            return out

        outcomes = edit_until_flipped([todo[t][0][self.edit_column] for t, _ in flat],
                                      [todo[t][0].label for t, _ in flat], [target for _, target in flat],
                                      propose=propose, checker=self.checker, config=cfg, scorer=self.sentence_scorer,
                                      decision=decision)
        kind = {"core": "core", "editor_only": "llm-edit"}[cfg.mode]
        for (t, target), outcome in zip(flat, outcomes):
            ex, res, _ = todo[t]
            if outcome.text is None:
                res.events.append(f"skipped:{outcome.reason}")
                res.notes.append(outcome.note(target))
                continue
            self._emit_cf(ex, res, target, outcome.text, outcome.edit(target), kind)

    def _units(self, todo: list[Any]) -> tuple[list[tuple[int, int | None, str]], dict[int, list[str]]]:
        """What each prompt edits, as (todo index, sentence position or None, text): the whole text (or
        hypothesis), or each chosen sentence of it; and the sentences of each split row."""
        units: list[tuple[int, int | None, str]] = []
        split: dict[int, list[str]] = {}
        for t, (ex, _, _) in enumerate(todo):
            if self.config.edit_sentences:
                split[t], chosen = self.pick_sentences(ex[self.edit_column], ex.label)
                units += [(t, pos, split[t][pos]) for pos in chosen]
            else:
                units.append((t, None, ex[self.edit_column]))
        return units, split

    def _jobs(self, units: list[tuple[int, int | None, str]], todo: list[Any]) -> list[Any]:
        """One (unit, target, best excerpts, keywords) per unit and target label, after retrieval where the mode
        retrieves (a unit with nothing retrieved is skipped)."""
        cfg = self.config
        retrieved: list[list[dict[str, Any]]] = [[] for _ in units]
        if cfg.mode != "editor_only":
            retrieved = self.retrieve([self.query(todo[t][0]) if pos is None else text for t, pos, text in units],
                                      exclude=[[text, *self._own_texts(todo[t][0])] for t, _, text in units])
        jobs = []
        for unit, hits in zip(units, retrieved):
            t, pos, text = unit
            ex, res, targets = todo[t]
            if cfg.mode != "editor_only" and not hits:
                if "skipped:no_retrieval" not in res.events:
                    res.events.append("skipped:no_retrieval")
                continue
            best = [h["text"] for h in hits[:cfg.keyword_excerpts]]
            words = keywords(best, self.task, max_n=cfg.max_keywords, query=text) if cfg.mode == "core" else None
            jobs += [(unit, target, best, words) for target in targets]
        return jobs

    def _edit_with_prompts(self, jobs: list[Any], todo: list[Any], edits: dict[tuple[int, str], list[Any]],
                           failures: dict[tuple[int, str], list[str]]) -> None:
        """Edit with a text generator and a few-shot prompt; the first answer that parses and passes the screen
        is kept."""
        cfg = self.config
        prompts, seeds = [], []
        for (t, pos, text), target, _, words in jobs:
            ex, res, _ = todo[t]
            row, cut = self._row(ex) if pos is None else ({"text": text, "label": ex.label}, False)
            if cut and "truncated:editor_input" not in res.events:
                res.events.append("truncated:editor_input")
            prompts.append(build_prompt(self.task, row, target, words, demonstrations=cfg.demonstrations,
                                        instructions=cfg.instructions) if cfg.prompt_template is None else
                           fill_template(cfg.prompt_template, template_values(self.task, row, target, words)))
            seeds.append(stable_hash("core", ex.seed, target, -1 if pos is None else pos) % (2 ** 31))
        if not prompts:
            return
        gen = as_text_generator(self.editor, what="prompt").generate_with_info(prompts, seeds=seeds)
        for j, ((t, pos, text), target, best, words) in enumerate(jobs):
            if gen.error(j):
                failures.setdefault((t, target), []).append("llm_error")
                continue
            reason = "llm_unparseable"
            for answer, cut in zip(gen.texts[j], gen.output_truncated[j]):
                new, reason = parse_answer(answer, text, self.task)
                if new is not None:
                    reason = screen_answer(new, text if pos is not None else self._cut(text)[0], prompts[j])
                    new = None if reason else new
                if new is not None:
                    info = {"keywords": words, "excerpts": best, "answer_truncated": True if cut else None}
                    edits.setdefault((t, target), []).append((pos, new, info))
                    break
            else:
                failures.setdefault((t, target), []).append(reason or "llm_unparseable")

    def _emit_edit(self, ex: Example, res: RowResult, target: str, done: list[tuple[int | None, str, dict]],
                   sentences: list[str] | None, failed: list[str] | None) -> None:
        """The counterfactual of one row and target: its edited sentences put back into the text, or the edited
        text (with the part the editor did not see kept as it was)."""
        cfg = self.config
        if cfg.edit_sentences:
            new_sentences = list(sentences)
            for pos, new, _ in done:
                new_sentences[pos] = new
            text = " ".join(new_sentences)
            edit: dict[str, Any] = {
                "target": target, "sentences": [{"position": pos, "old": sentences[pos], "new": new,
                                                 **{k: v for k, v in info.items() if v is not None}}
                                                for pos, new, info in done]}
            if failed:
                edit["sentences_not_edited"] = len(failed)
        else:
            _, text, info = done[0]
            edit = {"target": target, **info}
            head, cut = self._cut(ex[self.edit_column])
            if cut and cfg.mode != "retrieval_only":  # the model saw the head only: the rest is kept as is
                text = text.rstrip() + ex[self.edit_column][len(head):]
                edit["kept_unedited_chars"] = len(ex[self.edit_column]) - len(head)
        kind = {"core": "core", "retrieval_only": "cf-dpr", "editor_only": "llm-edit"}[cfg.mode]
        self._emit_cf(ex, res, target, text, edit, kind)

    def _edit_with_editor(self, jobs: list[Any], todo: list[Any], split: dict[int, list[str]],
                          edits: dict[tuple[int, str], list[Any]], failures: dict[tuple[int, str], list[str]],
                          ranker: Any = None) -> None:
        """Edit with a trained `Editor`: its own input (target, context, retrieved keywords,
        text) instead of a few-shot prompt; of its candidates, the one the checker (or ``ranker``) rates highest for
        the target."""
        if not jobs:
            return
        texts, targets, contexts, words_of, seeds = [], [], [], [], []
        for (t, pos, text), target, _, words in jobs:
            ex = todo[t][0]
            if self.task == "nli":
                context = ex[self.schema.text_columns[0]]
            elif pos is not None:
                sentences = split[t]
                context = " ".join([*sentences[max(0, pos - 1):pos], "[edit]", *sentences[pos + 1:pos + 2]])
                context = None if context == "[edit]" else context
            else:
                context = None
            if pos is None:
                text, cut = self._cut(text)
                if cut and "truncated:editor_input" not in todo[t][1].events:
                    todo[t][1].events.append("truncated:editor_input")
            texts.append(text)
            targets.append(target)
            contexts.append(context)
            words_of.append(words)
            seeds.append(stable_hash("core", ex.seed, target, -1 if pos is None else pos) % (2 ** 31))
        gen = self.editor.edit_with_info(texts, targets, contexts=contexts, keywords=words_of, seeds=seeds)
        options = [candidates(text, outs) for text, outs in zip(texts, gen.texts)]
        ranked_all = rank_by_checker(options, targets, ranker or self.checker, contexts if self.task == "nli" else None)
        who = self.editor.fingerprint()[:16]  # which editor wrote the row, in its provenance
        for j, ((t, pos, text), target, best, words) in enumerate(jobs):
            ranked = ranked_all[j]
            reasons = [screen_answer(c, texts[j]) for c, _ in ranked]  # against what the editor saw
            chosen = next((c for c, why in zip(ranked, reasons) if why is None), None)
            if chosen is None:
                failures.setdefault((t, target), []).append(reasons[0] if reasons else "llm_unchanged")
                continue
            info = {"editor": who, "keywords": words, "excerpts": best or None, "candidates": len(options[j]),
                    "checker_prob": None if chosen[1] is None else round(chosen[1], 4)}
            edits.setdefault((t, target), []).append((pos, chosen[0], info))

    def _emit_cf(self, ex: Example, res: RowResult, target: str, text: str, edit: dict[str, Any],
                 kind: str) -> None:
        edit = {k: v for k, v in edit.items() if v is not None}
        if text.strip() == ex[self.edit_column].strip():
            res.events.append("skipped:llm_unchanged")
            return
        res.counterfactuals.append(Counterfactual({self.edit_column: text}, target, kind, edit))
        res.events.append(f"produced:{kind}")


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _is_default(value: Any) -> bool:
    return isinstance(value, str) and value == "default"
