"""CrossAug (Lee et al., CIKM 2021): negative claims and cross-paired evidence edits for fact verification."""

from typing import TYPE_CHECKING

from ...registry import lazy_exports, register_method
from .config import CROSSAUG_KINDS, ROLES, CrossAugConfig

register_method("crossaug", task="fact-verification", config=CrossAugConfig, roles=ROLES,
                augmenter=f"{__name__}.augmenter:CrossAugAugmenter")
__getattr__, __dir__ = lazy_exports(__name__, {"CrossAugAugmenter": ".augmenter"})

if TYPE_CHECKING:  # for type checkers and the API docs; imported on first use otherwise
    from .augmenter import CrossAugAugmenter

__all__ = ["CrossAugAugmenter", "CrossAugConfig", "CROSSAUG_KINDS"]
