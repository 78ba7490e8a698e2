"""Every value a paper preset cites is held to the paper's own text (``../shared/papers/``): the section, table or
figure it names exists, and the words it quotes are in that section. A citation that points nowhere, or quotes
words the paper does not have where it says, fails here; so does a value cited to nothing."""

from __future__ import annotations

import pytest

from cfaug_hf import registry

from needs import shared_papers
from paper_text import PAPER_FILES, Paper, check, papers_dir, references

METHODS = sorted(PAPER_FILES)


@pytest.fixture(scope="module")
def papers():
    folder = papers_dir() or shared_papers()
    return {m: Paper.read(folder / f) for m, f in PAPER_FILES.items()}


def cited(method):
    """``{"config.num_beams": (value, source), ...}`` of a method's paper preset."""
    preset = registry.augmenter_class(method).presets["paper"]
    out = {**{f"config.{k}": (v.value, v.source) for k, v in preset.config.items()},
           **{f"components.{k}": (v.value, v.source) for k, v in preset.components.items()}}
    if method == "icda":  # the paper's method is the loop: its settings are cited the same way
        from cfaug_hf.methods.icda.paper import PAPER_LOOP

        out.update({f"run_icda.{k}": (v.value, v.source) for k, v in PAPER_LOOP.items()})
    return out


@pytest.mark.parametrize("method", METHODS)
def test_every_preset_value_is_held_to_the_papers_text(papers, method):
    problems = {name: check(papers[method], source, value) for name, (value, source) in cited(method).items()}
    assert not {k: v for k, v in problems.items() if v}, problems


def test_the_check_holds_a_value_to_the_numbers_its_quote_gives_and_a_table_quote_to_its_table(papers):
    core = papers["core"]
    assert not check(core, 'Table 9: "num_train_epochs 100"', 100)
    assert check(core, 'Table 9: "num_train_epochs 100"', 10)  # a value its quote does not hold
    assert check(core, 'Table 9: "num_train_epochs 10"', 10)  # Table 8's line, cited to Table 9
    assert not check(core, 'Table 8: "num_train_epochs 10"', 10)
    assert not check(core, 'Table 8: "hard_negatives 2"', [2])


def test_the_check_catches_a_wrong_section_a_missing_one_and_an_invented_quote(papers):
    llm = papers["llm"]
    assert check(llm, '§3.2: "we provide a manually written demonstration"')  # that sentence is in A.3
    assert check(llm, '§9.9: "a manually written demonstration"')
    assert check(llm, 'Table 15: "the model must always answer in French"')
    assert check(llm, "§3.2: the guidelines come first")  # cites the paper but quotes nothing
    assert check(llm, "our own choice")
    assert not check(llm, 'A.3: "we provide a manually written demonstration"')
    assert not check(papers["core"], "reference implementation (tanay2001/CORE, core/main.py): k=20")


def test_references_are_read_in_every_written_form():
    refs = references("§3.2 and Tables 15/18, Appendix A, A.3, Algorithm 1, §Implementation, "
                      "§'Avoiding Rationale Degeneration': \"some quoted words\"")
    assert refs["sections"] == ["3.2", "Implementation", "Avoiding Rationale Degeneration", "A", "A.3"]
    assert refs["captions"] == ["table 15", "table 18", "algorithm 1"]
    assert refs["quotes"] == ["some quoted words"]


def test_the_icda_loop_gives_every_run_icda_setting_a_paper_value_or_a_reason():
    import inspect

    from cfaug_hf.methods.icda.driver import run_icda
    from cfaug_hf.methods.icda.paper import PAPER_LOOP, PAPER_LOOP_NOT_IN_PAPER

    settings = {n for n, p in inspect.signature(run_icda).parameters.items() if p.kind == p.KEYWORD_ONLY}
    assert settings - set(PAPER_LOOP) - set(PAPER_LOOP_NOT_IN_PAPER) == set(), "a run_icda setting is unplaced"
    assert (set(PAPER_LOOP) | set(PAPER_LOOP_NOT_IN_PAPER)) - settings == set(), "a placed name is not a setting"
    assert not set(PAPER_LOOP) & set(PAPER_LOOP_NOT_IN_PAPER)
