"""An app file that cannot be imported: it raises at module level."""
from nice_attendre.models.app import App

raise RuntimeError("this app file is broken on purpose")


class Broken(App[None]):
    pass
