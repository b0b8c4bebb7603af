"""What Ryu apps send and receive (issue 28, section 1): flow-mod flags and timeouts,
OpenFlow 1.0/1.2/1.4/1.5, load-time refusals, transaction ids, error messages, barrier
replies, port status, randomness and trace names. Apps: tests/data/apps/ryu_*.py."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from nice_attendre import verify
from nice_attendre.frontend.cli import main

pytest.importorskip("os_ken")

APPS = Path(__file__).resolve().parents[2] / "data" / "apps"


def app(file: str, name: str) -> str:
    return f"{APPS / file}:{name}"


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


# ---- flow-mod flags and timeouts ------------------------------------------------------------

EXPIRING = app("ryu_flow_removed.py", "ExpiringSwitch13")
WRONG_FIELD = app("ryu_flow_removed.py", "ForgetfulByTheWrongField13")


def test_idle_timeout_and_send_flow_rem_reach_the_flow_removed_handler() -> None:
    """The entry carries the app's idle timeout and OFPFF_SEND_FLOW_REM; its expiry is an
    EventOFPFlowRemoved (reason, timeout, match as installed) the app's handler gets."""
    result = verify(EXPIRING, topology="linear:2", packets=2, properties=["no-forwarding-loops"])
    assert result.ok and result.complete
    result = cli("verify", WRONG_FIELD, "--topology", "linear:1", "--packets", "2", "--property",
                 "no-forwarding-loops")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert ("  ForgetfulByTheWrongField13.on_flow_removed raised KeyError: 'eth_src' (handling "
            "flow-removed(s1, {eth_dst=h1}, idle timeout))") in lines
    assert "      controller sends flow-mod {eth_dst=h1} -> output:1, idle 5s (notify) to s1" in lines
    assert "      s1 tells the controller (flow-removed)" in lines
