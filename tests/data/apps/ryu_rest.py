"""A Ryu app with a REST API (Ryu's WSGI server, which os-ken does not ship and the checker
does not model)."""
from ryu.app.wsgi import ControllerBase
from ryu.base import app_manager


class RestApp(app_manager.RyuApp):
    """Never loaded."""


class RestController(ControllerBase):
    """Never loaded."""
