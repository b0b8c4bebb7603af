"""A Ryu app that subclasses another app as Ryu's samples do (``from ryu.app import
simple_switch_13``): here ``ryu.app.ryu_flow_removed``, which os-ken does not ship, so the
checker takes ryu_flow_removed.py beside this file."""
from ryu.app import ryu_flow_removed


class QuietExpiringSwitch13(ryu_flow_removed.ExpiringSwitch13):
    """ExpiringSwitch13 under another name."""
