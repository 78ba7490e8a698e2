"""A prompt template the user writes (for instance a paper's printed prompt) reaches the model byte for byte, with
only its ``${...}`` placeholders filled, from Python and from the command line; a template with a placeholder the
task does not fill is refused before any model runs, naming it."""

from __future__ import annotations

import json

import pytest
from datasets import Dataset

from cfaug_hf import COREAugmenter, LLMCounterfactualAugmenter, TaskSchema
from cfaug_hf.text.template import check_template, fill_template

# Quotes, JSON braces, tabs, a trailing space and non-ASCII text, as printed prompts have them.
SENTIMENT = ('Task Definition: Revise a given sentence with minimal changes.\n\tDemonstration:\n'
             'Given Sentence: "The movie is the best."\n{"target": "negative"} — café \n\n'
             'Given Sentence: "${text}"\nCurrent Sentiment Polarity: "${label}" Target Sentiment Polarity: '
             '"${target}"\nRevised Sentence:')


class Recorder:
    """A stand-in LLM that records each prompt exactly as it is handed over, and answers with a fixed edit."""

    def __init__(self, answer):
        self.prompts, self.answer = [], answer

    def __call__(self, prompts):
        self.prompts += list(prompts)
        return [self.answer for _ in prompts]


def test_the_llm_method_sends_the_template_byte_for_byte():
    llm = Recorder('"A dull film."')
    aug = LLMCounterfactualAugmenter(llm, checker=None, prompt_template=SENTIMENT)
    out = aug.augment(Dataset.from_dict({"text": ["A fine film."], "label": ["positive"]}))
    expected = SENTIMENT.replace("${text}", "A fine film.").replace("${label}", "positive").replace(
        "${target}", "negative")
    assert llm.prompts == [expected]
    assert [r["text"] for r in out if r["cf_is_counterfactual"]] == ["A dull film."]


def test_the_nli_template_gets_the_targets_as_the_papers_list():
    llm = Recorder('["Kids sleep.", "Kids play outside."]')
    template = 'Premise: "${premise}"\nHypothesis: "${hypothesis}"\nCurrent: "${label}"\nTarget Relationships: ${targets}\n'
    aug = LLMCounterfactualAugmenter(llm, TaskSchema.nli(), checker=None, prompt_template=template)
    aug.augment(Dataset.from_dict({"premise": ["Kids play."], "hypothesis": ["Kids are active."],
                                   "label": ["entailment"]}))
    assert llm.prompts[0].endswith('Target Relationships: ["neutral", "contradiction"]\n') or \
        llm.prompts[0].endswith('Target Relationships: ["contradiction", "neutral"]\n')
    assert llm.prompts[0].startswith('Premise: "Kids play."\nHypothesis: "Kids are active."\nCurrent: "entailment"')


def test_core_sends_the_template_byte_for_byte_with_the_keywords_as_the_reference_prints_them():
    llm = Recorder("A dull film.")
    template = "Review: ${text}\nLabel: ${label}\nList of words: ${keywords}\nTarget Label: ${target}\n"
    aug = COREAugmenter(llm, mode="editor_only", checker=None, prompt_template=template)
    aug.augment(Dataset.from_dict({"text": ["A fine film."], "label": ["positive"]}))
    assert llm.prompts == ["Review: A fine film.\nLabel: positive\nList of words: []\nTarget Label: negative\n"]


@pytest.mark.parametrize("template,message", [
    ("Review: ${review}", r"\$\{review\}, which this task does not fill"),
    ("Costs $5: ${text}", r"'\$' that starts no placeholder"),
    ("   ", "non-empty"),
])
def test_a_template_the_task_cannot_fill_is_refused_before_any_model_runs(template, message):
    llm = Recorder("x")
    with pytest.raises(ValueError, match=message):
        LLMCounterfactualAugmenter(llm, checker=None, prompt_template=template)
    with pytest.raises(ValueError, match=message):
        COREAugmenter(llm, mode="editor_only", checker=None, prompt_template=template)
    assert llm.prompts == []


def test_templates_are_refused_for_tasks_with_structured_answers():
    with pytest.raises(ValueError, match="sentiment and NLI prompts"):
        LLMCounterfactualAugmenter(Recorder("x"), TaskSchema.relation_extraction(), prompt_template="${text}")


def test_fill_changes_nothing_but_the_placeholders():
    from hypothesis import given
    from hypothesis import strategies as st

    @given(st.text(alphabet=st.characters(blacklist_characters="$"), max_size=200), st.text(max_size=50))
    def prop(around, value):
        template = around + "${text}" + around
        check_template(template, ["text"])
        assert fill_template(template, {"text": value}) == around + value + around

    prop()


def test_the_command_line_reads_the_template_file_as_it_is(tmp_path, capsys):
    import argparse

    from cfaug_hf.cli import main
    from cfaug_hf.cli.options import add_config_options, config_values
    from cfaug_hf.methods.llm.config import LLMConfig

    (tmp_path / "prompt.txt").write_bytes(SENTIMENT.encode("utf-8") + b"\r\n")
    parser = argparse.ArgumentParser()
    fields = add_config_options(parser, LLMConfig, method="llm")
    args = parser.parse_args(["--prompt-template", f"@{tmp_path / 'prompt.txt'}"])
    assert config_values(args, fields)["prompt_template"] == SENTIMENT + "\r\n"  # line ends kept as written
    (tmp_path / "x.jsonl").write_text(json.dumps({"text": "A fine film.", "label": "positive"}) + "\n")
    with pytest.raises(SystemExit):
        main(["augment", str(tmp_path / "x.jsonl"), "--method", "llm", "--prompt-template", "@/no/such/file.txt",
              "--out", str(tmp_path / "out")])
    assert "--prompt-template: cannot read '/no/such/file.txt'" in capsys.readouterr().err
