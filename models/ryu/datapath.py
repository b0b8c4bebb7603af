"""The datapath object a Ryu app is handed: a switch of the model, seen through os-ken's API.

It has what apps use of os-ken's ``Datapath``: ``id``, ``ofproto``, ``ofproto_parser``,
``ports`` (port number -> port description), ``send_msg``, ``set_xid`` and
``send_barrier``. ``send_msg`` serialises the message as Ryu does and hands it to the
adapter, which turns it into the model's commands at once (within the handler call).
Transaction ids count from 1 per datapath (``xid``, which the adapter sets before each
handler call: kept over the run for an app that reads them, see :mod:`.adapter`).
"""
from __future__ import annotations

from typing import Any, Callable

from os_ken.ofproto import ofproto_protocol

#: The attributes and methods the checker's datapath offers (named in errors).
OFFERED = ("id", "ofproto", "ofproto_parser", "ports", "is_active", "send_msg", "set_xid", "send_barrier")


class CheckerDatapath(ofproto_protocol.ProtocolDesc):  # type: ignore[misc]
    """Switch ``dpid`` speaking OpenFlow wire version ``version`` (0x01 or 0x04).

    ``sink(datapath, msg)`` receives every message the app sends, after serialisation.
    """

    def __init__(self, dpid: int, version: int, ports: dict[int, Any],
                 sink: Callable[["CheckerDatapath", Any], None]) -> None:
        super().__init__(version)
        self.id = dpid
        self.ports = ports
        self.is_active = True
        self.xid = 0
        self._sink = sink

    def set_xid(self, msg: Any) -> int:
        """Give ``msg`` the next transaction id and return it."""
        self.xid = (self.xid + 1) & self.ofproto.MAX_XID
        msg.set_xid(self.xid)
        return self.xid

    def send_msg(self, msg: Any, close_socket: bool = False) -> bool:
        """Serialise ``msg`` (as Ryu does) and turn it into the model's command."""
        if not isinstance(msg, self.ofproto_parser.MsgBase):
            raise TypeError(f"send_msg needs an OpenFlow {self.ofproto.OFP_VERSION:#x} message of "
                            f"datapath.ofproto_parser, not {msg!r}")
        if close_socket:
            from nice_attendre.models.ryu.translate import refuse

            raise refuse("closing the connection to a switch (send_msg(close_socket=True))")
        if msg.xid is None:
            self.set_xid(msg)
        msg.serialize()
        self._sink(self, msg)
        return True

    def send_barrier(self) -> bool:
        """Send a barrier request."""
        return self.send_msg(self.ofproto_parser.OFPBarrierRequest(self))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"the checker's datapath has no {name!r} (it offers {', '.join(OFFERED)})")

    def __repr__(self) -> str:
        return f"<datapath s{self.id} (OpenFlow {self.ofproto.OFP_VERSION:#x}, checker)>"
