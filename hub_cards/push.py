"""Pushing and pulling (`cfaug_hf.sharing.push`), under the name users import it by."""

from cfaug_hf.sharing.push import *  # noqa: F401,F403
from cfaug_hf.sharing.push import __all__  # noqa: F401
