"""Protocol variants' parameters: the NAME:KEY=VALUE syntax, checking, canonical values, and
splitting protocol lists (models/protocols/params.py and the registry's resolve)."""
from __future__ import annotations

import pytest

from nice_attendre.errors import InputError, UnknownNameError
from nice_attendre.models.protocols import (ProtocolSpec, protocol_class, protocol_names, protocol_params, resolve,
                                            split_protocols)
from nice_attendre.models.protocols.params import Param, split_protocol_list, split_spec

PIF_DEFAULTS = (("clone", "auto"), ("match", ()), ("action", "rate-limit"), ("expire", "event"),
                ("remove", "flow-mod"), ("rules", ()), ("limit", "none"))


# ---- the syntax --------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("pif", ("pif", {})),
    ("pif:", ("pif", {})),
    ("pif:action=drop", ("pif", {"action": "drop"})),
    ("pif:clone=in_port,eth_src,eth_dst,action=drop", ("pif", {"clone": "in_port,eth_src,eth_dst", "action": "drop"})),
    ("pif: clone = in_port , eth_src ,action=drop,", ("pif", {"clone": "in_port,eth_src", "action": "drop"})),
    ("pif:match=eth_dst:h2,in_port:1", ("pif", {"match": "eth_dst:h2,in_port:1"})),
])
def test_split_spec(text: str, expected: tuple[str, dict[str, str]]) -> None:
    assert split_spec(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("pif:drop", "protocol 'pif:drop': expected KEY=VALUE after 'pif:', got 'drop'"),
    ("pif:=drop", "protocol 'pif:=drop': '=drop' has no key before '='"),
    ("pif:action=drop,action=flood", "protocol pif: action given twice"),
])
def test_split_spec_errors(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        split_spec(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(("text", "expected"), [
    ("openflow,attendre", ["openflow", "attendre"]),
    ("openflow,pif:clone=in_port,eth_src,eth_dst,action=drop,attendre",
     ["openflow", "pif:clone=in_port,eth_src,eth_dst,action=drop", "attendre"]),
    ("pif:match=eth_dst:h2,ip_src:h1,buffer:capacity=1,batch",
     ["pif:match=eth_dst:h2,ip_src:h1", "buffer:capacity=1", "batch"]),
    ("openflow,openflw", ["openflow", "openflw"]),  # a typo stays a protocol of its own (and fails by name)
    (" , ", []),
])
def test_split_protocol_lists(text: str, expected: list[str]) -> None:
    assert split_protocol_list(text, protocol_names()) == expected


def test_split_protocols_needs_one() -> None:
    with pytest.raises(InputError, match="give at least one protocol"):
        split_protocols(",")


# ---- checking values ---------------------------------------------------------------------

def test_defaults_are_filled_in() -> None:
    assert resolve("pif") == ProtocolSpec(protocol_class("pif"), PIF_DEFAULTS)
    assert resolve("buffer").params == (("granularity", "packet"), ("capacity", 16), ("timeout", "never"))
    assert resolve("batch").params == (("threshold", 2), ("timer", "event"))
    assert resolve("openflow").params == ()


def test_text_and_library_values_give_the_same_spec() -> None:
    text = resolve("pif:clone=eth_dst,in_port,match=in_port:1,eth_dst:h2,action=drop")
    mapping = resolve("pif", {"clone": ["in_port", "eth_dst"], "match": {"eth_dst": "h2", "in_port": 1},
                              "action": "drop"})
    as_string = resolve("pif", "clone=in_port,eth_dst,match=eth_dst:h2,in_port:1,action=drop")
    assert text == mapping == as_string
    # list values are kept in the declared order, match items sorted: equal settings, equal values
    assert dict(text.params)["clone"] == ("in_port", "eth_dst")
    assert dict(text.params)["match"] == (("eth_dst", "h2"), ("in_port", 1))


def test_the_label_parses_back_to_the_same_spec() -> None:
    for text in ("pif:clone=in_port,eth_src,match=eth_dst:h2,action=flood", "buffer:capacity=0,granularity=flow",
                 "batch:threshold=5,timer=never", "openflow", "pif"):
        spec = resolve(text)
        assert resolve(spec.label()) == spec
        assert resolve(spec) == spec
    assert resolve("batch").label() == "batch:threshold=2,timer=event"
    assert resolve("openflow").label() == "openflow"


@pytest.mark.parametrize(("protocol", "options", "message"), [
    ("pif:acton=drop", None,
     "unknown pif parameter 'acton'; did you mean 'action'? "
     "(known: clone, match, action, expire, remove, rules, limit)"),
    ("pif:action=dro", None, "protocol pif: bad value 'dro' for action; allowed: one of drop, flood, rate-limit"),
    ("buffer:capacity=300", None,
     "protocol buffer: bad value '300' for capacity; allowed: a whole number from 0 to 256"),
    ("buffer:capacity=-1", None,
     "protocol buffer: bad value '-1' for capacity; allowed: a whole number from 0 to 256"),
    ("buffer:capacity=two", None,
     "protocol buffer: bad value 'two' for capacity; allowed: a whole number from 0 to 256"),
    ("buffer", {"capacity": True}, "protocol buffer: bad value True for capacity; allowed: a whole number from 0 to 256"),
    ("batch:threshold=0", None,
     "protocol batch: bad value '0' for threshold; allowed: a whole number from 1 to 64"),
    ("pif:clone=in_port,foo", None,
     "protocol pif: bad value 'in_port,foo' for clone ('foo' is not one of them); allowed: one or more of "
     "in_port, eth_src, eth_dst, ip_src, ip_dst, tp_src, tp_dst, ip_proto, or auto"),
    ("pif:clone=", None,
     "protocol pif: bad value '' for clone (give at least one); allowed: one or more of in_port, eth_src, "
     "eth_dst, ip_src, ip_dst, tp_src, tp_dst, ip_proto, or auto"),
    ("pif:match=eth_dst", None,
     "protocol pif: bad value 'eth_dst' for match ('eth_dst' is not FIELD:VALUE); allowed: any, or FIELD:VALUE "
     "items with FIELD one of in_port, eth_src, eth_dst, ip_src, ip_dst, tp_src, tp_dst, ip_proto"),
    ("pif:match=vlan:3", None,
     "protocol pif: bad value 'vlan:3' for match ('vlan' is not a field); allowed: any, or FIELD:VALUE "
     "items with FIELD one of in_port, eth_src, eth_dst, ip_src, ip_dst, tp_src, tp_dst, ip_proto"),
    ("pif:match=in_port:x", None,
     "protocol pif: bad value 'in_port:x' for match (in_port takes a whole number); allowed: any, or FIELD:VALUE "
     "items with FIELD one of in_port, eth_src, eth_dst, ip_src, ip_dst, tp_src, tp_dst, ip_proto"),
    ("openflow:x=1", None, "protocol openflow takes no parameters (got x)"),
    ("attendre", {"size": 2}, "protocol attendre takes no parameters (got size)"),
    ("pif:action=drop", {"action": "flood"}, "protocol pif: action given twice"),
    ("nox:a=1", None, "unknown protocol 'nox' (known: openflow, openflow-b, attendre, pif, buffer, batch)"),
    (3, None, "protocol must be a name or a protocol class, got 3"),
])
def test_bad_parameters_are_one_clear_input_error(protocol: object, options: object, message: str) -> None:
    with pytest.raises(InputError) as caught:
        resolve(protocol, options)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_unknown_parameter_is_an_unknown_name_error() -> None:
    with pytest.raises(UnknownNameError) as caught:
        resolve("batch:treshold=3")
    assert caught.value.known == ("threshold", "timer")


def test_auto_is_accepted_only_where_declared() -> None:
    assert dict(resolve("pif:clone=auto").params)["clone"] == "auto"
    with pytest.raises(InputError, match="bad value 'auto' for action"):
        resolve("pif:action=auto")


def test_param_format_and_json() -> None:
    clone, match, action = protocol_params("pif")[:3]
    assert clone.format(("in_port", "eth_src")) == "in_port,eth_src"
    assert clone.to_json(("in_port", "eth_src")) == ["in_port", "eth_src"]
    assert match.format(()) == "any" and match.to_json(()) == {}
    assert match.format((("eth_dst", "h2"), ("in_port", 1))) == "eth_dst:h2,in_port:1"
    assert match.to_json((("eth_dst", "h2"), ("in_port", 1))) == {"eth_dst": "h2", "in_port": 1}
    assert action.describe() == ("action (default rate-limit): predefined action on a packet whose values are "
                                 "pending; allowed: one of drop, flood, rate-limit")


def test_a_param_of_unknown_kind_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="unknown kind"):
        Param("x", "float", 0.5, "help")
