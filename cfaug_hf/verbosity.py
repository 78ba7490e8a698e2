"""How much the library logs, in the style of ``transformers.logging``.

Every module logs to a child of the ``cfaug_hf`` logger. By default it shows warnings; ``CFAUG_VERBOSITY``
(``debug``, ``info``, ``warning``, ``error``) sets the level at import, and these helpers change it later:

Examples:
    >>> import cfaug_hf
    >>> cfaug_hf.set_verbosity_info()
    >>> cfaug_hf.get_verbosity() == logging.INFO
    True
    >>> cfaug_hf.set_verbosity_warning()
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator

__all__ = ["get_logger", "get_verbosity", "set_verbosity", "set_verbosity_debug", "set_verbosity_info", "set_verbosity_warning",
           "set_verbosity_error"]

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR,
           "critical": logging.CRITICAL}


def _root() -> logging.Logger:
    return logging.getLogger("cfaug_hf")


class _Scrubbing(logging.Filter):
    """Every record of a library logger, message and arguments, through the credentials scrubber (a key the user
    put in a setting, or an endpoint echoed, never reaches a log line)."""

    def filter(self, record: logging.LogRecord) -> bool:
        from .sharing.credentials import ScrubbingFilter  # on first use: importing it here would be circular

        return ScrubbingFilter().filter(record)


@contextlib.contextmanager
def hiding_records(logger_name: str, keep: Callable[[logging.LogRecord], bool]) -> Iterator[None]:
    """Inside the block, a dependency's logger ``logger_name`` passes on only the records ``keep`` accepts (a
    filter, not a level: some libraries run extra checks when their logger's level is WARNING or above).

    Examples:
        >>> with hiding_records("datasets.arrow_dataset", lambda record: record.levelno >= logging.ERROR):
        ...     pass
    """
    source = logging.getLogger(logger_name)
    hide = logging.Filter()
    hide.filter = keep  # type: ignore[method-assign]
    source.addFilter(hide)
    try:
        yield
    finally:
        source.removeFilter(hide)


def get_logger(name: str) -> logging.Logger:
    """The library's logger for module ``name`` (a child of ``cfaug_hf``), whose records are scrubbed of keys."""
    logger = logging.getLogger(name)
    if not any(isinstance(f, _Scrubbing) for f in logger.filters):
        logger.addFilter(_Scrubbing())
    return logger


def get_verbosity() -> int:
    """The level of the ``cfaug_hf`` logger (``logging.WARNING`` by default)."""
    return _root().getEffectiveLevel()


def set_verbosity(level: int | str) -> None:
    """Set the level of every ``cfaug_hf`` logger: a ``logging`` level or one of debug/info/warning/error."""
    if isinstance(level, str):
        if level.lower() not in _LEVELS:
            raise ValueError(f"Unknown verbosity {level!r}; expected one of {list(_LEVELS)}.")
        level = _LEVELS[level.lower()]
    logger = _root()
    logger.setLevel(level)
    if not logger.handlers and not logging.getLogger().handlers:
        # Without any handler Python prints warnings only; give info/debug messages somewhere to go. Records still
        # propagate, so an application's own logging set-up (or pytest's caplog) sees them too.
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[cfaug_hf] %(levelname)s: %(message)s"))
        logger.addHandler(handler)


def set_verbosity_debug() -> None:
    set_verbosity(logging.DEBUG)


def set_verbosity_info() -> None:
    set_verbosity(logging.INFO)


def set_verbosity_warning() -> None:
    set_verbosity(logging.WARNING)


def set_verbosity_error() -> None:
    set_verbosity(logging.ERROR)


def _from_environment() -> None:
    value = os.environ.get("CFAUG_VERBOSITY")
    if value:
        try:
            set_verbosity(value)
        except ValueError:
            logging.getLogger("cfaug_hf").warning("Ignoring CFAUG_VERBOSITY=%r; expected one of %s.", value,
                                                  list(_LEVELS))
