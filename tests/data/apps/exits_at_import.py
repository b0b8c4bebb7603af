"""An app file that calls sys.exit(0) while it is imported."""
import sys

from nice_attendre.models.app import App

sys.exit(0)


class Never(App[None]):
    pass
