from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...components.protocols import LabelScoring
from ...augmenter import Augmenter, Counterfactual, Example, RowResult
from ...components.checker import DEFAULT_CHECKER, resolve_checker
from ...components.generator import Generator
from ...generation import RowSeeds, as_text_generator
from ...schema import SchemaError, TaskSchema
from ...text import classify_edit, diff_tokens, substitute_span
from .config import CrossAugConfig
from .paper import PAPER

__all__ = ["CrossAugAugmenter"]

TextRewriter = Callable[[list[str]], Sequence[str | Sequence[str]]]


class CrossAugAugmenter(Augmenter[CrossAugConfig]):
    """CrossAug: contrastive claim/evidence counterfactuals for fact verification (Lee et al., CIKM 2021).

    For every SUPPORTS row (c, e):

    1. a negative-claim generator rewrites c into c' (beam search, width 5); rows where c' equals c are skipped, and
       so (by default, beyond the paper) are rewrites that only delete words or only change a word's form, spelling
       or abbreviation, since neither refutes the claim (``reject_deletions``, ``reject_same_meaning``); with
       several candidates the first acceptable one is used;
    2. c and c' are word-tokenised and their common prefix and suffix stripped; when both changed spans have 1 to
       ``max_span_tokens`` tokens and c's span occurs exactly once in the evidence (case-insensitive, on token
       boundaries, in any evidence piece), it is replaced there by c''s span, giving e' with its original spacing;
    3. it emits (c', e, REFUTES) and, when e' exists, (c, e', REFUTES) and (c', e', SUPPORTS).

    An optional `LabelChecker` drops counterfactuals whose label it does not predict (not in the
    paper). Rows with other labels are passed through; NOT ENOUGH INFO rows are left out unless ``keep_nei``.

    Input columns (from the schema, default `TaskSchema.fact_verification`):

    | column | type | notes |
    |---|---|---|
    | claim | string | rewritten by the generator |
    | evidence | string or list of strings | one piece is edited when the span is found |
    | label | name, id or ClassLabel | SUPPORTS / REFUTES (/ NOT ENOUGH INFO) |

    Args:
        generator: ``"default"``: the negative-claim generator shipped in the package (SmolLM2-135M + a LoRA
            adapter learned from VitaminC claim pairs; see `
            default_claim_generator`); a folder or Hub id of a saved `Generator`; a Generator; or
            any callable taking a list of claims and returning one rewrite (or a list of candidates) per claim. With
            several candidates, the first that differs from the claim is used.
        schema: the task schema; defaults to fact verification with columns claim/evidence/label.
        checker: the label-flip check, first in the filter stack: a counterfactual is kept only when this
            `LabelChecker` predicts its label over (claim, evidence). ``"default"``: the checker
            shipped for fact verification (MiniLM + a VitaminC-trained adapter); a folder or Hub id; None: off.
        config: a `CrossAugConfig`; keyword arguments override its fields.

    Examples:
        >>> from datasets import Dataset
        >>> rewrite = lambda claims: [c.replace("over 30 days", "less than 10 days") for c in claims]
        >>> ds = Dataset.from_dict({"claim": ["It was filmed over 30 days."],
        ...                         "evidence": ["Filming took place over 30 days in Arizona."],
        ...                         "label": ["SUPPORTS"]})
        >>> out = ds.map(CrossAugAugmenter(rewrite, checker=None), batched=True)  # every kind, unchecked
        >>> list(out["cf_kind"])
        ['original', "c'+e", "c+e'", "c'+e'"]
        >>> out[2]["evidence"], out[2]["label"]
        ('Filming took place less than 10 days in Arizona.', 'REFUTES')

    References:
        Minwoo Lee, Seungpil Won, Juae Kim, Hwanhee Lee, Cheoneum Park, Kyomin Jung. "CrossAug: A Contrastive Data
        Augmentation Method for Debiasing Fact Verification Models". CIKM 2021. https://arxiv.org/abs/2109.15107
    """

    method = "crossaug"  # its task, config and roles: the register_method call in __init__
    presets = {"paper": PAPER}
    citation = """@inproceedings{lee2021crossaug,
  title     = {CrossAug: A Contrastive Data Augmentation Method for Debiasing Fact Verification Models},
  author    = {Lee, Minwoo and Won, Seungpil and Kim, Juae and Lee, Hwanhee and Park, Cheoneum and Jung, Kyomin},
  booktitle = {Proceedings of the 30th ACM International Conference on Information and Knowledge Management},
  pages     = {3181--3185},
  year      = {2021},
  doi       = {10.1145/3459637.3482078}
}"""

    def __init__(self, generator: Generator | TextRewriter | str = "default", schema: TaskSchema | None = None, *,
                 checker: LabelScoring | str | None = DEFAULT_CHECKER, config: CrossAugConfig | None = None,
                 filters: Sequence[Any] | None = None, **overrides: Any) -> None:
        super().__init__(schema or TaskSchema.preset(self.default_task), config, filters=filters, **overrides)
        schema = self.schema
        if len(schema.text_columns) != 2:
            raise SchemaError(f"CrossAug needs a (claim, evidence) schema, got text_columns "
                              f"{list(schema.text_columns)}.")
        if isinstance(generator, str):
            from .recipes import default_claim_generator

            generator = default_claim_generator() if generator == "default" else Generator.from_pretrained(generator)
        if not (isinstance(generator, Generator) or callable(generator)
                or hasattr(generator, "generate_with_info")):
            raise TypeError(f"generator must be a Generator or a callable, got {type(generator).__name__}.")
        self.claim_column, self.evidence_column = schema.text_columns
        cfg = self.config
        for option in ("supports_label", "refutes_label"):
            value = getattr(cfg, option)
            try:
                schema.label_id(value)
            except SchemaError:
                raise SchemaError(
                    f"CrossAugConfig.{option}={value!r} is not one of the schema's labels {list(schema.label_names)}. "
                    f"CrossAug needs a fact-verification schema (TaskSchema.fact_verification()), or pass "
                    f"supports_label=/refutes_label= naming your labels.") from None
        self.supports = schema.label_name(cfg.supports_label)
        self.refutes = schema.label_name(cfg.refutes_label)
        self.nei = next((n for n in schema.label_names if n.casefold() == cfg.nei_label.casefold()), None)
        self.generator = generator
        self.checker = checker = resolve_checker(checker, schema, (self.supports, self.refutes), "CrossAug")
        if checker is not None:
            # The checker is the shared label-flip filter, first in the stack.
            self.filters.insert(0, self.label_flip_filter(checker))

    # ----------------------------------------------------------------------------------------------- generation
    # ---------------------------------------------------------------------------------------------- augmentation
    def augment_examples(self, examples: list[Example]) -> list[RowResult]:
        cfg = self.config
        results = [RowResult() for _ in examples]
        todo = []
        for ex, res in zip(examples, results):
            if ex.label == self.supports:
                todo.append((ex, res))
            elif self.nei is not None and ex.label == self.nei and not cfg.keep_nei:
                res.keep_original = False
                res.events.append("skipped:nei_dropped")
            else:
                res.events.append("skipped:label_not_augmented")
        if not todo:
            return results

        claims = [ex[self.claim_column] for ex, _ in todo]
        rewriter = as_text_generator(self.generator, what="claim")
        gen = rewriter.generate_with_info(claims, seeds=RowSeeds([ex for ex, _ in todo]))
        for (ex, res), claim, candidates, in_cut, out_cut in zip(todo, claims, gen.texts, gen.input_truncated,
                                                                 gen.output_truncated):
            if in_cut:
                res.events.append("truncated:generator_input")
            self._augment_one(ex, res, claim, candidates, out_cut)
        return results

    def _augment_one(self, ex: Example, res: RowResult, claim: str, candidates: list[str],
                     out_cut: list[bool]) -> None:
        cfg = self.config
        new_claim, diff, rejected = None, None, set()
        if cfg.top_candidate_only:
            candidates, out_cut = candidates[:1], out_cut[:1]
        for text, cut in zip(candidates, out_cut):
            if cut or not text.strip():
                continue
            edit = classify_edit(claim, text.strip())
            if edit.kind == "identical":
                rejected.add("same_claim")
            elif cfg.reject_deletions and edit.kind == "deletion" and not edit.flips_negation:
                rejected.add("deletion_only")
            elif cfg.reject_same_meaning and edit.kind == "same_meaning":
                rejected.add("same_meaning")
            else:
                new_claim, diff = text.strip(), diff_tokens(claim, text.strip())
                break
        if new_claim is None or diff is None:
            reason = next((r for r in ("same_meaning", "deletion_only", "same_claim") if r in rejected),
                          "generation_truncated" if any(out_cut) else "empty_generation")
            res.events.append(f"skipped:{reason}")
            return
        evidence = ex[self.evidence_column]
        claim_edit = {"old": diff.text(claim, "old"), "new": diff.text(new_claim, "new"), "type": diff.kind}
        if "c'+e" in cfg.kinds:
            res.counterfactuals.append(Counterfactual({self.claim_column: new_claim}, self.refutes, "c'+e",
                                                      {"claim": claim_edit}))
        sub = substitute_span(self.schema.pieces(evidence), diff, claim, new_claim,
                              max_span_tokens=cfg.max_span_tokens, min_span_tokens=cfg.min_span_tokens)
        if sub.pieces is None:
            res.events.append(f"no_evidence_edit:{sub.reason}")
        else:
            new_evidence = sub.pieces[0] if isinstance(evidence, str) else sub.pieces
            evidence_edit = {"piece": sub.piece, "start": sub.start, "old": sub.old_text, "new": sub.new_text}
            if "c+e'" in cfg.kinds:
                res.counterfactuals.append(Counterfactual({self.evidence_column: new_evidence}, self.refutes, "c+e'",
                                                          {"evidence": evidence_edit, "from_claim": claim_edit}))
            if "c'+e'" in cfg.kinds:
                res.counterfactuals.append(Counterfactual(
                    {self.claim_column: new_claim, self.evidence_column: new_evidence}, self.supports, "c'+e'",
                    {"claim": claim_edit, "evidence": evidence_edit}))
        res.events.extend(f"produced:{cf.kind}" for cf in res.counterfactuals)
