"""One subpackage per method: a config dataclass and an augmenter, registered here by name."""

from .crossaug import CrossAugAugmenter, CrossAugConfig

#: Augmenter classes by their ``method`` name.
METHODS = {cls.method: cls for cls in (CrossAugAugmenter,)}

__all__ = ["CrossAugAugmenter", "CrossAugConfig", "METHODS"]
