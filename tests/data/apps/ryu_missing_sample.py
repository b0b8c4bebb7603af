"""A Ryu app subclassing a sample that is neither in os-ken nor beside this file."""
from ryu.app import ryu_no_such_sample


class Orphan(ryu_no_such_sample.Base):
    """Never loaded."""
