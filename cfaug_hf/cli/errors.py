"""How the command line answers a failure: which errors are the user's (one line, exit status 2), the message in
the command line's words, and a missing input file found before anything heavy is imported."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .base import UsageError
from .data import file_format

__all__ = ["user_error_types", "message", "in_flag_terms", "missing_input"]


def user_error_types() -> tuple[type[BaseException], ...]:
    from ..deps import MissingDependencyError
    from ..sharing.folders import ComponentLoadError, FolderNotEmptyError
    from ..sharing.hub import HubError
    from ..schema import SchemaError

    types: list[type[BaseException]] = [UsageError, SchemaError, ComponentLoadError, HubError, FolderNotEmptyError,
                                        FileNotFoundError, PermissionError, ValueError, TypeError,
                                        MissingDependencyError]
    if "datasets" in sys.modules:
        from datasets.exceptions import DatasetGenerationError

        types.append(DatasetGenerationError)
    return tuple(types)


def message(err: BaseException) -> str:
    from ..sharing.credentials import scrub_text

    text = scrub_text(str(err).strip(), pieces=True) or type(err).__name__
    cause = err.__cause__ or err.__context__
    # datasets wraps a malformed file in "An error occurred while generating the dataset"; the cause says where.
    if cause is not None and type(err).__name__ == "DatasetGenerationError":
        text = f"{text}: {str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__}"
    text = text.splitlines()[0] if len(text.splitlines()) > 3 else " ".join(text.split())
    if len(text) > _MAX_MESSAGE:  # an error that quotes a huge input (a value, a file's content) stays readable
        text = f"{text[:_MAX_MESSAGE]}... ({len(text) - _MAX_MESSAGE} more characters)"
    return text


#: Longest error message the command line prints.
_MAX_MESSAGE = 2000


def in_flag_terms(text: str, parser: argparse.ArgumentParser, command: str) -> str:
    """A library error in the command line's words: ``retriever=`` becomes ``--retriever``, ``mode='editor_only'``
    becomes ``--mode editor_only`` and "Pass a TaskSchema" names ``--task`` and ``--columns``, for the options this
    command has (the library's messages name Python arguments, which a command-line user never typed)."""
    import re

    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    sub = subs[0].choices.get(command) if subs else None
    if sub is None:
        return text
    flags: dict[str, str] = {}
    for action in sub._actions:
        long = [o for o in action.option_strings if o.startswith("--")]
        if long:
            flags.setdefault(action.dest[4:] if action.dest.startswith("cfg_") else action.dest, long[0])
    if "task" in flags and "columns" in flags:
        text = text.replace("Pass a TaskSchema with the right names.",
                            "Name the columns with --task and --columns (and --label-column for the label).")

    def option(match: re.Match) -> str:
        flag = flags.get(match.group(1))
        if flag is None:
            return match.group(0)
        value = (match.group(2) or "").strip("'\"")
        return f"{flag} {value}" if value else flag

    # a config value refused by its own check ("targets must be one of ..., got 'x'") names the flag typed
    text = text.replace("from_pretrained() arguments: ", "")
    text = re.sub(r"(?<![\w.-])([a-z][a-z_]*)(?= must )", lambda m: flags.get(m.group(1), m.group(1)), text)
    # "COREAugmenter(mode='core') needs ..." reads "COREAugmenter with --mode core needs ..."
    text = re.sub(r"\b([A-Z]\w*)\((\w+=[^()]*)\)", lambda m: f"{m.group(1)} with {m.group(2)}", text)
    return re.sub(r"(?<![\w.-])([a-z][a-z_]*)=('[^']*'|\"[^\"]*\"|[\w./-]+)?", option, text)


#: Commands whose first argument is a dataset (file, folder or Hub id), checked before the method imports.
_DATA_COMMANDS = {"augment": 1, "amplify": 1, "report": 2}


def missing_input(argv: list[str]) -> str | None:
    """The first dataset argument that names a local file that is not there, found before the parser imports the
    methods (torch, transformers: seconds), so the commonest mistake is answered at once."""
    if not argv or argv[0] not in _DATA_COMMANDS or any(a in ("-h", "--help") for a in argv):
        return None
    for arg in argv[1:1 + _DATA_COMMANDS[argv[0]]]:
        if arg.startswith("-"):
            return None
        path = Path(arg)
        if not path.exists() and file_format(path):
            return f"cfaug {argv[0]}: error: {arg}: no such file or folder."
    return None
