import pytest

import cfaug_hf.components.checker


@pytest.fixture(autouse=True)
def _shipped_checker_only_where_marked(request, monkeypatch):
    """Unit tests drive augmenters with tiny random models and rule rewriters whose outputs a real checker would
    judge; the default checker is on only in tests marked ``shipped_checker``, which test it."""
    if request.node.get_closest_marker("shipped_checker") is None:
        monkeypatch.setattr(cfaug_hf.components.checker, "default_checker", lambda task: None)

# The root conftest.py points HF_ENDPOINT at a loopback Hub server before anything Hugging Face is imported.


@pytest.fixture
def fever_rows():
    """A handful of fact-verification rows covering the CrossAug cases."""
    return {
        "id": ["r0", "r1", "r2", "r3", "r4"],
        "claim": [
            "Little Miss Sunshine was filmed over 30 days.",
            "Magic Johnson played for the Lakers.",
            "The Cretaceous ended.",
            "Paris is the capital of France.",
            "Cats are mammals.",
        ],
        "evidence": [
            "Filming began in June and took place over 30 days in Arizona.",
            "Magic Johnson played for the Lakers. The Lakers won five titles with Magic Johnson.",
            "The Cretaceous ended with a large mass extinction.",
            "Paris is the capital and most populous city of France.",
            "Cats are small carnivorous mammals.",
        ],
        "label": ["SUPPORTS", "SUPPORTS", "REFUTES", "SUPPORTS", "SUPPORTS"],
    }


@pytest.fixture
def rule_rewriter():
    """A deterministic negative-claim 'generator' built from string rules."""
    rules = {
        "over 30 days": "less than 10 days",
        "played for the Lakers": "never played for the Lakers",
        "Paris": "Lyon",
        "mammals": "mammals",
    }

    def rewrite(claims):
        out = []
        for c in claims:
            for old, new in rules.items():
                if old in c:
                    c = c.replace(old, new)
                    break
            out.append(c)
        return out

    return rewrite
