"""The five papers' text (``../shared/papers/``) cut into sections, tables and figures, so that a test can hold a
preset's citation to the paper: the section it names must exist, and the words it quotes must be in that section.

Headings come in three shapes in these text files: numbered (``3.1 CF-DPR ...``, ``3.2. LLMs for ...``), appendix
letters (``A Implimentation details``, ``A.3. Implement Details``) and Markdown (``## Implementation``). Captions:
``Table 15: ...``, ``Figure 2: ...``, ``Algorithm 1: ...``. Matching ignores case, punctuation, hyphenation at line
ends and spacing, since the text was extracted from PDFs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: method -> the paper's file in ../shared/papers/
PAPER_FILES = {
    "crossaug": "crossaug-contrastive-fact-verification.txt",
    "race": "race-multihop-fact-verification-counterfactuals.txt",
    "core": "core-retrieval-editing-counterfactuals.txt",
    "icda": "icda-iterative-counterfactual-augmentation.txt",
    "llm": "llm-counterfactual-generation-study.txt",
}

_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,2})*)\.? +([A-Z][^\n]{1,70})$")
_LETTERED = re.compile(r"^([A-G](?:\.\d{1,2})*)\.? +([A-Z][a-z][^\n]{1,70})$")
_MARKDOWN = re.compile(r"^(#{1,4}) +(.+)$")
_CAPTION = re.compile(r"^(Table|Figure|Algorithm) (\d+)[:.]")


def papers_dir() -> Path | None:
    data = os.environ.get("CFAUG_SHARED_DATA")
    folder = (Path(data).parent if data else ROOT.parent / "shared") / "papers"
    return folder if folder.is_dir() else None


def words(text: str) -> list[str]:
    """Lower-case words, a word cut by a hyphen at a line end joined again."""
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)
    return re.findall(r"[a-z0-9]+", text.lower())


def contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def _order(number: str) -> tuple:
    head, *rest = number.split(".")
    return ((100 + ord(head) - ord("A")) if head.isalpha() else int(head), *map(int, rest))


def _follows(last: tuple, new: tuple) -> bool:
    """Whether heading number ``new`` can come next after ``last``: its first child, the next sibling at some
    level, or the first appendix (A) after the numbered sections."""
    if new == last + (1,) or (new == (100,) and (not last or last[0] < 100)):
        return True
    j = len(new) - 1
    return j < len(last) and new[:j] == last[:j] and new[j] == last[j] + 1


@dataclass
class Paper:
    """A paper's words, and where each section (by number or Markdown title) and caption starts and ends."""

    text: str
    sections: dict[str, tuple[int, int]] = field(default_factory=dict)  # key -> (first line, end line)
    captions: set[str] = field(default_factory=set)  # "table 15", "figure 2", "algorithm 1"
    #: "table 15" -> (first line, end line) of what the table can hold: from the end of the caption before it (at
    #: most `TABLE_LINES` lines up: a caption sits below its table) to the end of its own caption
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> "Paper":
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        paper = cls(text)
        starts: list[tuple[str, int, int]] = []  # (key, line, depth)
        caption_lines: list[tuple[str, int]] = []
        last: tuple = ()
        for i, line in enumerate(lines):
            line = line.strip()
            md = _MARKDOWN.match(line)
            if md:
                cap = _CAPTION.match(md.group(2).strip())
                if cap:  # "### Algorithm 1: ..." is a heading and a caption
                    paper.captions.add(f"{cap.group(1).lower()} {cap.group(2)}")
                starts.append((md.group(2).strip().lower(), i, len(md.group(1))))
                continue
            cap = _CAPTION.match(line)
            if cap:
                paper.captions.add(f"{cap.group(1).lower()} {cap.group(2)}")
                caption_lines.append((f"{cap.group(1).lower()} {cap.group(2)}", i))
                continue
            m = _NUMBERED.match(line) or _LETTERED.match(line)
            if m and not line.endswith((".", ":", ",")) and ". " not in m.group(2):
                order = _order(m.group(1))
                if _follows(last, order):  # a list item or a stray number ("30 SUP instances") does not
                    last = order
                    starts.append((m.group(1).lower(), i, m.group(1).count(".") + 1))
        for k, (key, line, depth) in enumerate(starts):
            end = next((l for _, l, d in starts[k + 1:] if d <= depth), len(lines))
            paper.sections.setdefault(key, (line, end))
        previous_end = 0
        for key, line in caption_lines:
            end = next((k for k in range(line + 1, len(lines)) if not lines[k].strip()), len(lines))
            paper.spans.setdefault(key, (max(previous_end, line - TABLE_LINES), end))
            previous_end = end
        paper._lines = lines
        return paper

    def span_words(self, caption: str) -> list[str] | None:
        span = self.spans.get(caption)
        return None if span is None else words("\n".join(self._lines[span[0]:span[1]]))

    def section_words(self, key: str) -> list[str] | None:
        span = self.sections.get(key.lower())
        return None if span is None else words("\n".join(self._lines[span[0]:span[1]]))


#: Most lines a table (or figure) runs above its caption.
TABLE_LINES = 80

#: a reference in a citation: "§3.2", "Appendix A", "A.3", "Table 15", "Tables 15/18", "Algorithm 1",
#: "§Implementation" or "§'Avoiding Rationale Degeneration'" (a Markdown heading's title)
_SECTION = re.compile(r"§\s?(?:((?:\d+|[A-G])(?:\.\d+)*)|'([^']+)'|([A-Z][a-z]+))")
_APPENDIX = re.compile(r"\b(?:Appendix )([A-G](?:\.\d+)*)\b|\b([A-G]\.\d+(?:\.\d+)*)\b")
_CAPTIONS = re.compile(r"\b(Tables?|Figures?|Algorithms?) (\d+(?:\s*(?:[-/,]|and)\s*\d+)*)")
_QUOTE = re.compile(r"\"([^\"]{8,})\"")
#: the one source outside the paper a value may cite: the authors' released code, by repository and file
REFERENCE = re.compile(r"reference implementation \(([\w.-]+/[\w.-]+)[, ]+([\w./-]+\.\w+)")


def references(source: str) -> dict[str, list[str]]:
    """The sections, captions and quotes a citation names."""
    sections = [next(g for g in m.groups() if g) for m in _SECTION.finditer(source)]
    sections += [a or b for a, b in _APPENDIX.findall(source)]
    captions = []
    for kind, numbers in _CAPTIONS.findall(source):
        kind = kind.rstrip("s").lower()
        captions += [f"{kind} {n}" for n in re.findall(r"\d+", numbers)]
    return {"sections": sections, "captions": captions, "quotes": _QUOTE.findall(source)}


_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:e-?\d+)?)(%?)")


def numbers_in(text: str) -> list[float]:
    """The numbers a quote holds ("30 beams", "2e-5", "k = 10", "15%": 0.15 and 15)."""
    found = []
    for number, percent in _NUMBER.findall(text):
        value = float(number)
        found += [value, value / 100] if percent else [value]
    return found


def value_problem(value: object, quotes: list[str]) -> str | None:
    """Why a cited value does not appear in its quotes, when they hold numbers and the value is one (or a list of
    them); None when it does, or when there is nothing to compare."""
    values = value if isinstance(value, (list, tuple)) else [value]
    if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return None
    held = [n for q in quotes for n in numbers_in(q)]
    if not held:
        return None
    absent = [v for v in values if not any(abs(float(v) - n) <= 1e-9 * max(1.0, abs(n)) for n in held)]
    return f"gives {absent[0]!r}, a number its quotes do not hold ({sorted(set(held))})" if absent else None


def check(paper: Paper, source: str, value: object = None) -> list[str]:
    """What is wrong with one citation (empty: it holds). It must name a section or caption of the paper that
    exists, or the reference implementation by repository and file; every quote must be the paper's words, found
    in a section or table it names (anywhere in the paper when it names only figures or algorithms); a citation
    of the paper must quote it; and a numeric ``value`` must be a number its quotes hold, where they hold any."""
    refs = references(source)
    problems = []
    missing = [s for s in refs["sections"] if s.lower() not in paper.sections]
    missing += [c for c in refs["captions"] if c not in paper.captions]
    if missing:
        problems.append(f"names {missing}, which the paper does not have")
    cites_paper = bool(refs["sections"] or refs["captions"])
    if not cites_paper and not REFERENCE.search(source):
        problems.append("names no section, table or figure of the paper, and no reference implementation "
                        "(owner/repo, file)")
    if cites_paper and not refs["quotes"]:
        problems.append("quotes nothing from the paper")
    where = [paper.section_words(s) for s in refs["sections"] if s.lower() in paper.sections]
    tables = [c for c in refs["captions"] if c.startswith("table") and c in paper.spans]
    where += [paper.span_words(c) for c in tables]
    named = refs["sections"] + tables
    for quote in refs["quotes"]:
        needle = words(quote)
        scope = where or [words(paper.text)]
        if not any(contains(w, needle) for w in scope):
            problems.append(f"quotes {quote!r}, which is not in {named or 'the paper'}")
    if cites_paper:
        wrong = value_problem(value, refs["quotes"])
        if wrong:
            problems.append(wrong)
    return problems
