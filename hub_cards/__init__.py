"""Model and dataset cards for cfaug-hf, and helpers to push and pull components, augmenters and datasets.

Examples:
    >>> from hub_cards import push_augmented, component_card, dataset_card

The code lives in `cfaug_hf.sharing` (the core's ``push_to_hub`` methods need it, and the core never imports
upward); this package is where users find it.
"""

from cfaug_hf.sharing import (HubError, component_card, dataset_card, download_folder, merge_card, pull,
                              push_augmented, push_augmenter, push_component, source_info, split_provenance)
from cfaug_hf.sharing.cards import BEGIN, END, TEMPLATES, is_hub_id

__all__ = ["component_card", "dataset_card", "merge_card", "source_info", "split_provenance", "HubError", "pull",
           "push_augmented", "push_augmenter", "push_component", "download_folder", "BEGIN", "END", "TEMPLATES",
           "is_hub_id"]
