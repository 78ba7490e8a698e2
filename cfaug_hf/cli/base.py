"""What every ``cfaug`` command shares: the command base class, the user-error type, and the option groups (output,
dataset, schema, generation backend, Hub token) with the same names, defaults and rules wherever they appear."""

from __future__ import annotations

import abc
import argparse
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

__all__ = ["Parser", "Command", "UsageError", "positive_int", "nonnegative_int", "positive_float", "fraction",
           "add_out_options", "add_data_options", "add_schema_options", "add_backend_option", "add_token_option", "add_allow_endpoint_option", "allowing_given_endpoints",
           "schema_options", "check_out", "writing_out", "TASK_COLUMNS"]


class UsageError(Exception):
    """A problem with what the user asked for; printed as one line."""


class Parser(argparse.ArgumentParser):
    """``argparse`` with "did you mean" for a mistyped method, choice or option (``--method crosaug``,
    ``--ouut``), also when another error (a required option) is what argparse reports first.

    Examples:
        >>> p = Parser(prog="x", exit_on_error=False)
        >>> _ = p.add_argument("--out")
        >>> p.suggestion("unrecognized arguments: --ouut z")
        " (did you mean '--out' for '--ouut'?)"
    """

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._argv = list(args) if args is not None else []
        return super().parse_known_args(args, namespace)

    def _options(self) -> list[str]:
        found = [o for a in self._actions for o in a.option_strings if o.startswith("--")]
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    found += [o for a in sub._actions for o in a.option_strings if o.startswith("--")]
        return found

    def suggestion(self, message: str) -> str:
        """What the user probably meant, for argparse's ``message``; "" when nothing is close."""
        import difflib
        import re

        choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
        if choice:
            close = difflib.get_close_matches(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)), n=1)
            return f" (did you mean '{close[0]}'?)" if close else ""
        known = set(self._options())
        typed = [t.split("=")[0] for t in getattr(self, "_argv", []) if t.startswith("--")]
        if "unrecognized arguments:" in message:
            typed += [t.split("=")[0] for t in message.split(":", 1)[1].split() if t.startswith("--")]
        guesses = []
        for token in dict.fromkeys(typed):
            if token not in known and sum(o.startswith(token) for o in known) != 1:  # argparse takes a prefix
                close = difflib.get_close_matches(token, sorted(known), n=1, cutoff=0.75)
                if close:
                    guesses.append(f"'{close[0]}' for '{token}'")
        return f" (did you mean {', '.join(guesses)}?)" if guesses else ""

    def error(self, message: str) -> Any:
        super().error(message + self.suggestion(message))


class Command(abc.ABC):
    """One ``cfaug`` command: its name, its help, its options and what it runs.

    A command is a subclass in its own file of this package, listed in ``cfaug_hf.cli.COMMANDS``.

    Examples:
        >>> class Hello(Command):
        ...     name, summary, description = "hello", "Say hello.", "Print a greeting."
        ...     def add_arguments(self, parser, argv):
        ...         parser.add_argument("--who", default="world")
        ...     def run(self, args):
        ...         print(f"hello {args.who}")
        >>> parser = argparse.ArgumentParser()
        >>> _ = Hello().add_to(parser.add_subparsers(), [])
        >>> args = parser.parse_args(["hello", "--who", "you"])
        >>> args.func(args)
        hello you
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    description: ClassVar[str]

    @abc.abstractmethod
    def add_arguments(self, parser: argparse.ArgumentParser, argv: list[str]) -> None:
        """Add the command's options; ``argv`` is the whole command line (``augment`` reads its method from it)."""

    @abc.abstractmethod
    def run(self, args: argparse.Namespace) -> None:
        """Do the work; raise `UsageError` (or a library error) for a problem with the user's input."""

    def add_to(self, subparsers: Any, argv: list[str]) -> argparse.ArgumentParser:
        parser = subparsers.add_parser(self.name, help=self.summary, description=self.description)
        self.add_arguments(parser, argv)
        parser.set_defaults(func=self.run)
        return parser


def _number_type(convert: type, allowed: Any, expected: str) -> Any:
    """An argparse type: ``convert(text)`` (int or float, never nan or inf) for which ``allowed(value)`` holds."""
    import math

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not math.isfinite(value) or not allowed(value):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text}")
        return value

    return parse


#: argparse types: a whole number >= 1, a whole number >= 0, a finite number > 0, a number strictly in (0, 1).
positive_int = _number_type(int, lambda v: v >= 1, "a whole number >= 1")
nonnegative_int = _number_type(int, lambda v: v >= 0, "a whole number >= 0")
positive_float = _number_type(float, lambda v: v > 0, "a finite number > 0")
fraction = _number_type(float, lambda v: 0 < v < 1, "a number strictly between 0 and 1")


# ------------------------------------------------------------------------------------------------- option groups
def add_out_options(parser: argparse.ArgumentParser, what: str, *, default: str | None = None) -> None:
    """``--out`` and ``--overwrite``, with the same rules for every command (those of
    `cfaug_hf.sharing.folders.write_folder`)."""
    where = f" (default {default})" if default else ""
    parser.add_argument("--out", required=default is None, default=default,
                        help=f"folder for {what}{where}: new, empty, or written by this command before (its files "
                             f"are replaced; files you added are kept)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into a folder holding other files too: same-named files are replaced, no other "
                             "file is touched")


def add_data_options(parser: argparse.ArgumentParser, *, limit: str = "") -> None:
    """``--split`` and ``--limit`` for a command that reads a dataset."""
    parser.add_argument("--split", default=None,
                        help="the split to read from a saved DatasetDict folder or a Hub dataset (default train)")
    parser.add_argument("--limit", type=positive_int, default=None,
                        help=limit or "read only the first N rows (a quick trial run on a large dataset; a Hub "
                                      "dataset is streamed, so only those rows are downloaded)")
    parser.add_argument("--subset", default=None, help="a Hub dataset's subset (configuration name)")
    parser.add_argument("--revision", default=None, help="a Hub dataset's revision: a branch, tag or commit")


#: Task presets of the schema options: the factory's column parameters in order, and its label parameter.
TASK_COLUMNS = {"fact-verification": (("claim", "evidence"), "label"), "nli": (("premise", "hypothesis"), "label"),
                "sentiment": (("text",), "label"), "token-classification": (("tokens",), "tags"),
                "relation-extraction": (("text",), "label")}


def add_schema_options(parser: argparse.ArgumentParser, *, tasks: tuple[str, ...] = tuple(TASK_COLUMNS),
                       task: str | None = None, label: str | None = None, task_help: str = "",
                       nei: bool = True, id_help: str = "column with a stable row id used as cf_source_id") -> None:
    """``--task``, ``--columns``, ``--label-column``, ``--id-column`` and ``--nei``: which columns of the data play
    which part. ``task``/``label`` are the defaults; ``nei=False`` hides ``--nei`` (a command without fact
    verification)."""
    parser.add_argument("--task", choices=sorted(tasks), default=task,
                        help=task_help or f"task preset naming the columns (default {task})")
    parser.add_argument("--columns", help="the text columns in preset order, comma-separated (claim,evidence / "
                                          "premise,hypothesis / text / tokens)")
    parser.add_argument("--label-column", default=label, help="column holding the label (tags for "
                                                              "token-classification)" +
                        (f" (default {label})" if label else ""))
    parser.add_argument("--id-column", default=None, help=id_help)
    parser.add_argument("--label-names", default=None, metavar="A,B,...",
                        help="the label names in id order, comma-separated (a label given as id 0 is the first): "
                             "sentiment and NLI labels, or token-classification tags (fact verification's are "
                             "SUPPORTS,REFUTES, with --nei NOT ENOUGH INFO)")
    parser.add_argument("--nei", action="store_true",
                        help="fact-verification labels include NOT ENOUGH INFO" if nei else argparse.SUPPRESS)


def task_name(task: str) -> str | None:
    """The ``--task`` name of a method's task (``sentiment-analysis`` is ``sentiment``)."""
    from ..schema import TaskSchema

    factory = TaskSchema.PRESETS.get(task)
    return next((name for name in TASK_COLUMNS if TaskSchema.PRESETS.get(name) == factory), None)


def schema_options(args: argparse.Namespace, default_task: str | None = None) -> dict[str, Any] | None:
    """The schema (a recipe's ``{"preset": ..., columns}`` form) the schema options give; None when none is given
    and there is no default. ``default_task``: the method's own task, which --columns and the other column options
    modify when --task is not given."""
    task = args.task or (task_name(default_task) if default_task else None)
    label_names = getattr(args, "label_names", None)
    if args.task is None and not (args.columns or args.label_column or args.id_column or args.nei or label_names):
        return None
    if task is None:
        raise UsageError("--columns, --label-column, --id-column and --nei need --task (the preset they "
                         f"modify): one of {sorted(TASK_COLUMNS)}.")
    names, label = TASK_COLUMNS[task]
    columns = args.columns.split(",") if args.columns else list(names)
    if len(columns) != len(names):
        raise UsageError(f"--columns for {task} names {len(names)} column(s) ({','.join(names)}), got "
                         f"{args.columns!r}.")
    schema: dict[str, Any] = {"preset": task, **dict(zip(names, columns)), "id_column": args.id_column}
    if args.label_column:
        schema[label] = args.label_column
    if args.nei:
        if task != "fact-verification":
            raise UsageError("--nei is for --task fact-verification.")
        schema["nei"] = True
    if label_names is not None:
        names = [n.strip() for n in label_names.split(",")]
        if task == "fact-verification":
            raise UsageError("--label-names: fact verification's labels are SUPPORTS and REFUTES (--nei adds NOT "
                             "ENOUGH INFO), which the methods read by name; rename the data's labels to those.")
        if len(names) < 2 or not all(names) or len(set(names)) != len(names):
            raise UsageError(f"--label-names {label_names!r}: expected two or more different names, comma-separated "
                             f"in id order, e.g. --label-names negative,positive.")
        schema["tag_names" if task == "token-classification" else "label_names"] = names
    return schema


def add_backend_option(parser: argparse.ArgumentParser) -> None:
    """``--backend``: the generation engine (the engines package's table), refused at parse time when it is not
    installed here, before any data or model loads."""
    from ..deps import install_hint
    from ..generation.engines import AUTO, engine_class, engine_names

    installed = [AUTO, *(n for n in engine_names() if engine_class(n).available())]
    missing = [n for n in engine_names() if n not in installed]

    def backend(text: str) -> str:
        if text in missing:
            raise argparse.ArgumentTypeError(f"{text} is not installed here ({install_hint(engine_class(text).requires)}"
                                             f"); installed: {', '.join(installed)}")
        if text not in installed:
            raise argparse.ArgumentTypeError(f"expected one of {', '.join(installed)}, got {text!r}")
        return text

    parser.add_argument("--backend", type=backend, default=AUTO, metavar="{" + ",".join(installed) + "}",
                        help="generation engine (cfaug_hf.generation.engines): auto (default) picks, per call, the fastest "
                             "installed one that gives the transformers outputs (CTranslate2 float32 for beams, "
                             "transformers' shared-prefix sampler for sampled candidates)"
                             + (f"; not installed here: {', '.join(missing)}" if missing else ""))


def add_allow_endpoint_option(parser: argparse.ArgumentParser) -> None:
    """``--allow-endpoint URL``: consent to an LLM endpoint that a loaded recipe or augmenter names (see
    `cfaug_hf.sharing.consent`)."""
    parser.add_argument("--allow-endpoint", action="append", default=[], metavar="URL",
                        help="let a --recipe or --augmenter that names this LLM endpoint send your rows (and the key "
                             "in the variable it names) to it; repeatable. Without it such a run stops before the "
                             "first request. Endpoints you give yourself (--llm URL) need nothing")
    parser.add_argument("--endpoint-key-env", default=None, metavar="VAR",
                        help="environment variable whose key is sent to the endpoints allowed with --allow-endpoint "
                             "('none': no key). A loaded file never chooses which of your secrets is sent: one whose "
                             "endpoint config names a key variable stops before the first request until you name it")


@contextlib.contextmanager
def allowing_given_endpoints(args: argparse.Namespace) -> Iterator[None]:
    """``--allow-endpoint`` applied while the command runs, in this process and those it starts (map workers, Ray
    actors)."""
    from ..sharing.consent import allowing

    from ..sharing.consent import parse_address

    urls = getattr(args, "allow_endpoint", None) or []
    key_env = getattr(args, "endpoint_key_env", None)
    for url in urls:
        try:
            parse_address(url)
        except ValueError as err:
            raise UsageError(f"--allow-endpoint {url!r} {err}; expected an http:// or https:// address with a host "
                             f"and no credentials, e.g. --allow-endpoint http://localhost:8000/v1.") from None
    if key_env is not None and not urls:
        raise UsageError("--endpoint-key-env names the key for the endpoints allowed with --allow-endpoint; give "
                         "--allow-endpoint URL too.")
    if key_env not in (None, "none", ""):
        from ..sharing.credentials import check_env_name

        try:
            check_env_name(key_env, "--endpoint-key-env")
        except ValueError as err:
            raise UsageError(str(err)) from None
    with allowing(urls, key_env=key_env):
        yield


def check_repo_id(repo_id: str, flag: str) -> None:
    """A Hub repository id the Hub will take (``name`` or ``namespace/name``), checked before any work starts."""
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as err:
        raise UsageError(f"{flag} {repo_id!r}: not a Hub repository id (expected namespace/name: letters, digits, "
                         f"'-', '_' and '.'; {str(err).splitlines()[0][:160]}).") from None


def add_token_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--token", default=None, help="Hub token (default: HF_TOKEN or the saved login)")


# --------------------------------------------------------------------------------------------------- --out rules
def check_out(out: str, *inputs: str, kind: str = "dataset", overwrite: bool = False) -> None:
    """Refuse an output folder that is, contains or lies inside an input, or that holds files the library did not
    write (see `cfaug_hf.sharing.folders.check_writable`), before anything is read or written."""
    from ..sharing.folders import FolderNotEmptyError, check_writable

    o = Path(out).resolve()
    for given in inputs:
        i = Path(given).resolve()
        if o == i or i in o.parents or o in i.parents:
            raise UsageError(f"--out {out} would overwrite the input {given}; choose another folder.")
    if o.is_file():
        raise UsageError(f"--out {out} is a file; expected a folder.")
    try:
        check_writable(o, kind, overwrite=overwrite)
    except FolderNotEmptyError as err:
        raise UsageError(f"--out {err}") from None


@contextlib.contextmanager
def writing_out(args: argparse.Namespace, kind: str) -> Iterator[Path]:
    """The temporary folder a command writes its whole ``--out`` into; it takes ``--out``'s place only when the
    command succeeds (`cfaug_hf.sharing.folders.write_folder`), so a failed run leaves nothing behind."""
    from ..sharing.folders import FolderNotEmptyError, write_folder

    try:
        with write_folder(args.out, kind, overwrite=args.overwrite) as tmp:
            yield tmp
    except FolderNotEmptyError as err:
        raise UsageError(f"--out {err}") from None
