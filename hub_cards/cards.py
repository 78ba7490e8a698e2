"""Card rendering (`cfaug_hf.sharing.cards`), under the name users import it by."""

from cfaug_hf.sharing.cards import *  # noqa: F401,F403
from cfaug_hf.sharing.cards import __all__  # noqa: F401
