"""An app file during whose import the user presses Ctrl-C."""
import os
import signal

from nice_attendre.models.app import App

os.kill(os.getpid(), signal.SIGINT)


class Never(App[None]):
    pass
