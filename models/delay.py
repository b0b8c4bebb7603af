"""Forwarding delay of a flow's first packet: the closed forms of paper section VIII.

The paper (Sun, Agarwal, Ng, TNSM 2015, section VIII) gives the one-way delay of
the *initial* packet of a flow over a path of N switches, when no switch holds a
matching entry yet, for three mechanisms:

* OpenFlow (3)   -- switches forward on their own; a switch that sees the packet
  before it has processed its flow-mod sends a redundant packet-in;
* OpenFlow-B (4) -- the controller sends the flow-mod/packet-out to switch 1 only
  after every other switch has answered a barrier;
* Attendre (5)   -- switch 1 passes an Attendre Command (AC) in the packet, and the
  next switches buffer the packet until their own flow-mod is processed.

Both are built from (1) and (2)::

    L_k = q_o^k + t^k + g^k + q_i^{k+1}                     0 <= k <= N      (1)
    S   = L_0 + p_sp^1 + tau^1 / 2 + p_c^1                                    (2)

Contracts of this module:

* Every time is in **seconds** (floats); only the command line converts units.
* Every formula is vectorised over *cases*: arrays have a leading axis of cases
  ``C`` and one column per switch (``(C, N)``) or per link (``(C, N + 1)``).
  All grid cases are evaluated at once, with a Python loop only over the hops.
* Functions are pure: no I/O, no clock, no global state. Randomness appears only in
  :func:`monte_carlo_study`, from ``numpy.random.default_rng(seed)``; the same seed
  gives the same study.
* Bad parameters raise :class:`DelayConfigError` (a ``ValueError``) naming the key.

Reading of the paper made here (VIII.C): the first packet carries the AC on the
links *out of switches 1 .. N-1* (links 1 .. N-1 in the numbering of (1)), so under
Attendre ``t^k`` is the encapsulated transmission delay (3.04 us) for
``1 <= k <= N-1`` and the plain one (0.576 us) on link 0 (sender to switch 1, before
any switch has seen the flow-mod) and link N (switch N to the receiver, which does
not need the AC). OpenFlow and OpenFlow-B never encapsulate. With N = 1 no link
carries the AC, and the three formulas agree, as the paper states.
"""
from __future__ import annotations

import dataclasses
import difflib
import json
import math
import re
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from nice_attendre.errors import InputError
from nice_attendre.input_files import SETTINGS_BYTES, read_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib


# --------------------------------------------------------------------------- errors


class DelayModelError(InputError):
    """A delay computation that cannot be done with the arrays or parameters given
    (an :class:`~nice_attendre.errors.InputError`, so also a ``ValueError``)."""


class DelayConfigError(DelayModelError):
    """A bad delay parameter (unknown key, wrong type, negative delay) or parameter file.

    ``key`` names the parameter at fault (``None`` when the fault is the file itself).
    """

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


# ----------------------------------------------------------------------- mechanisms


class Mechanism(Enum):
    """The three mechanisms compared in section VIII, in the paper's order."""

    OPENFLOW = "OpenFlow"
    OPENFLOW_B = "OpenFlow-B"
    ATTENDRE = "Attendre"

    @property
    def slug(self) -> str:
        """Lower-case identifier used in CSV column names (``openflow_b``)."""
        return self.name.lower()


# ------------------------------------------------------------ per-case path arrays


_SWITCH_FIELDS = ("tau", "p_sp", "p_sc", "p_c")
_LINK_FIELDS = ("q_o", "t", "g", "q_i")


@dataclass(frozen=True, eq=False)
class PathDelays:
    """Delay components of one path of N switches, for C cases at once (seconds).

    Switch-indexed arrays, shape ``(C, N)``; column ``j`` is switch ``j + 1``:

    * ``tau``  -- round-trip TCP delay between the switch and the controller (tau^k)
    * ``p_sp`` -- switch processing of the data packet (p_sp^k)
    * ``p_sc`` -- switch processing of a command message (p_sc^k)
    * ``p_c``  -- controller processing of a packet-in from the switch (p_c^k)

    Link-indexed arrays, shape ``(C, N + 1)``; column ``k`` is the link from node k
    to node k + 1 (node 0 is the sender, node N + 1 the receiver):

    * ``q_o`` -- outgoing queueing at node k (q_o^k)
    * ``t``   -- transmission delay on the link (t^k)
    * ``g``   -- propagation delay on the link (g^k)
    * ``q_i`` -- incoming queueing at node k + 1 (q_i^{k+1})

    Any array broadcastable to its shape is accepted (a scalar, one row for all
    cases, a 1-D row meaning a single case); N is taken from ``tau``. Stored arrays
    are read-only float64. Negative or non-finite values raise
    :class:`DelayModelError`.
    """

    tau: np.ndarray
    p_sp: np.ndarray
    p_sc: np.ndarray
    p_c: np.ndarray
    q_o: np.ndarray
    t: np.ndarray
    g: np.ndarray
    q_i: np.ndarray

    def __post_init__(self) -> None:
        raw = {name: np.array(getattr(self, name), dtype=float) for name in _SWITCH_FIELDS + _LINK_FIELDS}
        if raw["tau"].ndim == 0 or raw["tau"].shape[-1] < 1:
            raise DelayModelError("tau must have one column per switch (at least one switch)")
        n = raw["tau"].shape[-1]
        two_d = {name: arr.reshape(1, -1) if arr.ndim == 1 else arr for name, arr in raw.items()}
        if any(arr.ndim > 2 for arr in two_d.values()):
            raise DelayModelError("delay arrays must be at most 2-D (cases x hops)")
        try:
            cases = np.broadcast_shapes(*((arr.shape[0],) if arr.ndim == 2 else () for arr in two_d.values()))
        except ValueError as err:
            raise DelayModelError(f"delay arrays disagree on the number of cases: {err}") from None
        count = cases[0] if cases else 1
        for name, arr in two_d.items():
            width = n if name in _SWITCH_FIELDS else n + 1
            try:
                full = np.broadcast_to(arr, (count, width))
            except ValueError:
                raise DelayModelError(
                    f"{name} has shape {raw[name].shape}, expected {(count, width)} "
                    f"({'one column per switch' if width == n else 'one column per link, N + 1'})"
                ) from None
            if not np.all(np.isfinite(full)) or np.any(full < 0):
                raise DelayModelError(f"{name} must hold finite, non-negative delays (seconds)")
            object.__setattr__(self, name, full)

    @property
    def n_switches(self) -> int:
        """N, the number of switches on the path."""
        return int(self.tau.shape[1])

    @property
    def n_cases(self) -> int:
        """C, the number of cases evaluated at once."""
        return int(self.tau.shape[0])


# ------------------------------------------------------------------ formulas (1)-(5)


def link_delays(path: PathDelays) -> np.ndarray:
    """Formula (1): ``L_k = q_o^k + t^k + g^k + q_i^{k+1}`` for k = 0..N; shape ``(C, N + 1)``."""
    return path.q_o + path.t + path.g + path.q_i


def setup_delay(path: PathDelays) -> np.ndarray:
    """Formula (2): ``S = L_0 + p_sp^1 + tau^1 / 2 + p_c^1``; shape ``(C,)``.

    The time from the sender queueing the packet until the controller is done with
    the packet-in of switch 1.
    """
    return link_delays(path)[:, 0] + path.p_sp[:, 0] + path.tau[:, 0] / 2 + path.p_c[:, 0]


def _openflow_trace(path: PathDelays) -> tuple[np.ndarray, np.ndarray]:
    """Recursion (3): the delay ``(C,)`` and the redundant packet-in indicator ``(C, N)``."""
    links = link_delays(path)
    s = setup_delay(path)
    total = s + path.p_sc[:, 0] + path.tau[:, 0] / 2 + path.p_sp[:, 0] + links[:, 1]
    indicator = np.zeros(path.tau.shape, dtype=bool)
    for j in range(1, path.n_switches):
        late = (total - s) < (path.tau[:, j] / 2 + path.p_sc[:, j])
        indicator[:, j] = late
        retry = path.tau[:, j] + path.p_c[:, j] + path.p_sc[:, j] + path.p_sp[:, j]
        total = total + path.p_sp[:, j] + links[:, j + 1] + retry * late
    return total, indicator


def openflow_delay(path: PathDelays) -> np.ndarray:
    """Formula (3), OpenFlow without barriers: ``T_nb^N`` per case, shape ``(C,)``.

    ``T^1 = S + p_sc^1 + tau^1/2 + p_sp^1 + L_1`` and, for n >= 2,
    ``T^n = T^{n-1} + p_sp^n + L_n + (tau^n + p_c^n + p_sc^n + p_sp^n) * I(T^{n-1} - S < tau^n/2 + p_sc^n)``.
    """
    return _openflow_trace(path)[0]


def redundant_packet_ins(path: PathDelays) -> np.ndarray:
    """The indicator of (3) per hop, shape ``(C, N)`` (bool).

    Column ``j`` (switch ``j + 1``) is true when the packet reaches that switch
    before its flow-mod is processed, so the switch sends a redundant packet-in.
    Column 0 is always false: switch 1's packet-in is the flow's first, not a
    redundant one.
    """
    return _openflow_trace(path)[1]


def openflow_b_delay(path: PathDelays) -> np.ndarray:
    """Formula (4), OpenFlow with barriers: ``T_b^N`` per case, shape ``(C,)``.

    ``sum_{k=0}^{N} L_k + sum_{k=1}^{N} p_sp^k + p_sp^1 + tau^1 + p_c^1 + p_sc^1
    + max_{2<=j<=N} (tau^j + p_sc^j)``. With N = 1 the max ranges over no switch
    and is taken as 0 (the controller waits for no barrier reply).
    """
    barrier_wait = (
        np.max(path.tau[:, 1:] + path.p_sc[:, 1:], axis=1) if path.n_switches > 1 else np.zeros(path.n_cases)
    )
    return (
        link_delays(path).sum(axis=1)
        + path.p_sp.sum(axis=1)
        + path.p_sp[:, 0]
        + path.tau[:, 0]
        + path.p_c[:, 0]
        + path.p_sc[:, 0]
        + barrier_wait
    )


def attendre_delay(path: PathDelays) -> np.ndarray:
    """Formula (5), OpenFlow with Attendre: ``T_a^N`` per case, shape ``(C,)``.

    ``T^1 = S + tau^1/2 + p_sc^1 + p_sp^1 + L_1`` and, for n >= 2,
    ``T^n = p_sp^n + L_n + S + max(T^{n-1} - S, tau^n/2 + p_sc^n)``.
    The caller puts the AC-encapsulated transmission delay in ``path.t`` on the
    links that carry the AC (see the module docstring).
    """
    links = link_delays(path)
    s = setup_delay(path)
    total = s + path.tau[:, 0] / 2 + path.p_sc[:, 0] + path.p_sp[:, 0] + links[:, 1]
    for j in range(1, path.n_switches):
        ready = np.maximum(total - s, path.tau[:, j] / 2 + path.p_sc[:, j])
        total = path.p_sp[:, j] + links[:, j + 1] + s + ready
    return total


def forwarding_delay(path: PathDelays, mechanism: Mechanism) -> np.ndarray:
    """The delay of ``mechanism`` per case: dispatch to (3), (4) or (5)."""
    match mechanism:
        case Mechanism.OPENFLOW:
            return openflow_delay(path)
        case Mechanism.OPENFLOW_B:
            return openflow_b_delay(path)
        case Mechanism.ATTENDRE:
            return attendre_delay(path)
    raise DelayModelError(f"unknown mechanism {mechanism!r}")  # pragma: no cover


# ------------------------------------------------------------------ parameter parsing


_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_DURATION = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(s|ms|us|µs|ns)?\s*$")


def parse_duration(value: object, key: str) -> float:
    """A non-negative, finite duration in seconds.

    Accepts a number (seconds) or a string with an optional unit: ``"5us"``,
    ``"1 ms"``, ``"167ns"``, ``"0.001"`` (seconds). Raises :class:`DelayConfigError`
    naming ``key`` otherwise.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise DelayConfigError(
            f"{key}: expected a duration (seconds, or a string such as '5us'), got {type(value).__name__}", key
        )
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match is None:
            raise DelayConfigError(f"{key}: cannot read {value!r} as a duration (use e.g. 1ms, 5us, 167ns)", key)
        seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    else:
        seconds = float(value)
    if not math.isfinite(seconds):
        raise DelayConfigError(f"{key}: delay must be finite, got {value!r}", key)
    if seconds < 0:
        raise DelayConfigError(f"{key}: delay must not be negative, got {value!r}", key)
    return seconds


def parse_durations(value: object, key: str) -> tuple[float, ...]:
    """A non-empty tuple of durations in seconds.

    Accepts a list of durations, a comma-separated string (``"50us,250us"``) or an
    evenly spaced range ``"START:STOP:COUNT"`` with both ends included
    (``"0.1ms:1ms:4"`` is 0.1, 0.4, 0.7, 1.0 ms).
    """
    if isinstance(value, str):
        if value.count(":") == 2:
            start, stop, count = value.split(":")
            n = parse_count(count.strip(), key)
            lo, hi = parse_duration(start, key), parse_duration(stop, key)
            return tuple(float(x) for x in np.linspace(lo, hi, n))
        items: list[object] = [part for part in value.split(",") if part.strip()]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = [value]
    if not items:
        raise DelayConfigError(f"{key}: expected at least one duration", key)
    return tuple(parse_duration(item, key) for item in items)


def parse_count(value: object, key: str) -> int:
    """A positive integer (an int, or a string of digits)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        raise DelayConfigError(f"{key}: expected a positive integer, got {value!r}", key)
    if value < 1:
        raise DelayConfigError(f"{key}: expected a positive integer, got {value}", key)
    return value


def parse_sigma(value: object, key: str) -> float:
    """A non-negative, finite real (the sigma of a log-normal, dimensionless)."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise DelayConfigError(f"{key}: expected a non-negative number, got {value!r}", key) from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DelayConfigError(f"{key}: expected a non-negative number, got {type(value).__name__}", key)
    if not math.isfinite(value) or value < 0:
        raise DelayConfigError(f"{key}: expected a non-negative number, got {value!r}", key)
    return float(value)


def _param(default: Any, parse: Callable[[object, str], Any], doc: str) -> Any:
    return field(default=default, metadata={"parse": parse, "doc": doc})


@dataclass(frozen=True)
class DelayParams:
    """The parameters of a delay study (section VIII.C defaults), times in seconds.

    Each field is one key of a parameter file and one command-line option; the
    per-switch values are the same on every switch (the per-case arrays of
    :class:`PathDelays` allow more). ``p_c`` and ``tau`` are the grid axes: the
    study takes every ``p_c`` value and, for each, every assignment of a ``tau``
    value to each switch (``len(tau) ** n_switches`` combinations).
    ``sigma_switch`` and ``sigma_controller`` are used by the Monte Carlo study only.
    """

    n_switches: int = _param(6, parse_count, "number of switches N on the path")
    t: float = _param(0.576e-6, parse_duration, "transmission delay per link, plain packet")
    t_ac: float = _param(3.04e-6, parse_duration, "transmission delay on links carrying the Attendre Command")
    g: float = _param(167e-9, parse_duration, "propagation delay per link")
    q_i: float = _param(3.4e-6, parse_duration, "incoming queueing delay per node")
    q_o: float = _param(3.4e-6, parse_duration, "outgoing queueing delay per node")
    p_sp: float = _param(5e-6, parse_duration, "switch processing of a data packet")
    p_sc: float = _param(1e-3, parse_duration, "switch processing of a command message")
    p_c: tuple[float, ...] = _param(
        tuple(float(x) for x in np.linspace(0.1e-3, 1e-3, 4)), parse_durations, "controller packet-in processing delays"
    )
    tau: tuple[float, ...] = _param(
        tuple(float(x) for x in np.linspace(50e-6, 250e-6, 6)), parse_durations, "switch-controller round-trip delays"
    )
    sigma_switch: float = _param(0.25, parse_sigma, "Monte Carlo: log-normal sigma of p_sp and p_sc")
    sigma_controller: float = _param(0.25, parse_sigma, "Monte Carlo: log-normal sigma of p_c")

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            parsed = f.metadata["parse"](getattr(self, f.name), f.name)
            object.__setattr__(self, f.name, parsed)

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        """The parameter names, in declaration order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def describe(cls) -> dict[str, str]:
        """Parameter name -> one-line description."""
        return {f.name: f.metadata["doc"] for f in dataclasses.fields(cls)}

    def with_overrides(self, overrides: Mapping[str, object]) -> DelayParams:
        """A copy with ``overrides`` applied; values are parsed as in a parameter file.

        Raises :class:`DelayConfigError` naming the key for an unknown key (with a
        suggestion when one is close), a value of the wrong type or a negative delay.
        """
        known = self.keys()
        for key in overrides:
            if key not in known:
                close = difflib.get_close_matches(str(key), known, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise DelayConfigError(f"unknown key {key!r}{hint} (known: {', '.join(known)})", str(key))
        return dataclasses.replace(self, **dict(overrides))


def load_config(path: Path) -> dict[str, object]:
    """Read a parameter file: ``.json`` (an object) or ``.toml`` (top-level keys).

    Returns the raw mapping, to be applied with :meth:`DelayParams.with_overrides`.
    Raises :class:`DelayConfigError` for an unknown suffix, unreadable or malformed
    file, or a file that is not a key/value table.
    """
    suffix = path.suffix.lower()
    if suffix not in (".json", ".toml"):
        raise DelayConfigError(f"parameter file {path} must end in .json or .toml")
    # A regular file only (not /dev/zero, a FIFO), of at most SETTINGS_BYTES.
    text = read_text(path, "parameter file", SETTINGS_BYTES, DelayConfigError)
    try:
        data = json.loads(text) if suffix == ".json" else tomllib.loads(text)
    except RecursionError:
        raise DelayConfigError(f"parameter file {path} nests arrays or tables too deeply") from None
    except ValueError as err:  # JSONDecodeError, TOMLDecodeError, or a number with too many digits
        raise DelayConfigError(f"parameter file {path} is not valid {suffix[1:].upper()}: {err}") from None
    if not isinstance(data, dict):
        raise DelayConfigError(f"parameter file {path} must hold a table of key = value pairs")
    return data


# ------------------------------------------------------------------- path building


def ac_links(n_switches: int) -> np.ndarray:
    """Mask ``(N + 1,)`` of the links on which the first packet carries the AC under Attendre.

    Links 1 .. N-1 (out of switches 1 .. N-1); never link 0 nor link N.
    """
    mask = np.zeros(n_switches + 1, dtype=bool)
    mask[1:n_switches] = True
    return mask


def transmission_row(params: DelayParams, mechanism: Mechanism) -> np.ndarray:
    """Transmission delay per link ``(N + 1,)`` for ``mechanism`` (AC links only under Attendre)."""
    row = np.full(params.n_switches + 1, params.t)
    if mechanism is Mechanism.ATTENDRE:
        row[ac_links(params.n_switches)] = params.t_ac
    return row


def build_path(
    params: DelayParams,
    mechanism: Mechanism,
    tau: np.ndarray,
    p_c: np.ndarray | float,
    p_sp: np.ndarray | float | None = None,
    p_sc: np.ndarray | float | None = None,
) -> PathDelays:
    """The :class:`PathDelays` of ``mechanism`` for per-case ``tau`` ``(C, N)`` and ``p_c``.

    ``p_sp``/``p_sc`` default to the fixed values of ``params``; queueing,
    transmission and propagation are always those of ``params``.
    """
    return PathDelays(
        tau=tau,
        p_sp=params.p_sp if p_sp is None else p_sp,
        p_sc=params.p_sc if p_sc is None else p_sc,
        p_c=p_c,
        q_o=params.q_o,
        t=transmission_row(params, mechanism),
        g=params.g,
        q_i=params.q_i,
    )


def rtt_grid(values: tuple[float, ...], n_switches: int, limit: int = 5_000_000) -> np.ndarray:
    """Every assignment of one of ``values`` to each switch: shape ``(len(values) ** N, N)``.

    Rows are in lexicographic order of value indices, switch 1 varying slowest.
    Raises :class:`DelayConfigError` when there would be more than ``limit`` rows.
    """
    count = len(values) ** n_switches
    if count > limit:
        raise DelayConfigError(
            f"the grid would have {len(values)}^{n_switches} = {count} RTT combinations (limit {limit}); "
            "use fewer tau values or switches, or a Monte Carlo study",
            "tau",
        )
    # Row c's index for switch j is digit j of c in base len(values), the first the most
    # significant (np.indices would need one array dimension per switch: at most 64).
    base = len(values)
    powers = base ** np.arange(n_switches - 1, -1, -1, dtype=np.int64)
    index = (np.arange(count, dtype=np.int64)[:, None] // powers) % base
    return np.asarray(values, dtype=float)[index]


# -------------------------------------------------------------------------- studies


@dataclass(frozen=True, eq=False)
class DelayStudy:
    """Delays of the three mechanisms on K controller delays x M cases each (seconds).

    * ``p_c`` ``(K,)``: the controller delay of each group (the grid value; the median
      of the draws in a Monte Carlo study).
    * ``tau`` ``(K, M, N)``: the switch-controller RTT of each switch in each case.
    * ``openflow``, ``openflow_b``, ``attendre`` ``(K, M)``: formulas (3), (4), (5).
    * ``redundant`` ``(K, M, N)``: the indicator of (3) per hop.
    * ``mode``: ``"grid"`` or ``"monte-carlo"``; ``seed`` is set for Monte Carlo only.
    """

    params: DelayParams
    mode: str
    p_c: np.ndarray
    tau: np.ndarray
    openflow: np.ndarray
    openflow_b: np.ndarray
    attendre: np.ndarray
    redundant: np.ndarray
    seed: int | None = None

    def delays(self, mechanism: Mechanism) -> np.ndarray:
        """The ``(K, M)`` delays of one mechanism."""
        match mechanism:
            case Mechanism.OPENFLOW:
                return self.openflow
            case Mechanism.OPENFLOW_B:
                return self.openflow_b
            case Mechanism.ATTENDRE:
                return self.attendre
        raise DelayModelError(f"unknown mechanism {mechanism!r}")  # pragma: no cover

    @property
    def cases_per_controller(self) -> int:
        """M, the number of cases for each controller delay."""
        return int(self.openflow.shape[1])


def _evaluate(
    params: DelayParams,
    tau: np.ndarray,
    p_c: np.ndarray | float,
    p_sp: np.ndarray | float | None = None,
    p_sc: np.ndarray | float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """OpenFlow, OpenFlow-B and Attendre delays and the redundant indicator for one group."""
    plain = build_path(params, Mechanism.OPENFLOW, tau, p_c, p_sp, p_sc)
    with_ac = build_path(params, Mechanism.ATTENDRE, tau, p_c, p_sp, p_sc)
    nb, indicator = _openflow_trace(plain)
    return nb, openflow_b_delay(plain), attendre_delay(with_ac), indicator


def _study(params: DelayParams, mode: str, groups: list[tuple], seed: int | None) -> DelayStudy:
    taus = np.stack([g[0] for g in groups])
    results = [_evaluate(params, *g) for g in groups]
    return DelayStudy(
        params=params,
        mode=mode,
        p_c=np.asarray(params.p_c, dtype=float),
        tau=taus,
        openflow=np.stack([r[0] for r in results]),
        openflow_b=np.stack([r[1] for r in results]),
        attendre=np.stack([r[2] for r in results]),
        redundant=np.stack([r[3] for r in results]),
        seed=seed,
    )


def grid_study(params: DelayParams) -> DelayStudy:
    """The paper's numerical analysis (VIII.C-D): every ``p_c`` x every RTT combination.

    Switch processing, queueing, transmission and propagation delays are fixed;
    each switch gets its own RTT from ``params.tau`` (see :func:`rtt_grid`).
    """
    tau = rtt_grid(params.tau, params.n_switches)
    return _study(params, "grid", [(tau, p_c) for p_c in params.p_c], None)


def lognormal(rng: np.random.Generator, median: float, sigma: float, shape: tuple[int, ...]) -> np.ndarray:
    """Log-normal draws with the given median: ``median * exp(sigma * Z)``, Z standard normal."""
    return median * np.exp(sigma * rng.standard_normal(shape))


def monte_carlo_study(params: DelayParams, samples: int, seed: int) -> DelayStudy:
    """A Monte Carlo study in the manner of paper 001 (log-normal switch/controller delays).

    For each controller delay ``p_c`` of ``params`` and each of ``samples`` cases,
    independently per switch:

    * ``p_sp^k`` and ``p_sc^k`` are log-normal with medians ``params.p_sp`` and
      ``params.p_sc`` and sigma ``params.sigma_switch``;
    * ``p_c^k`` is log-normal with median ``p_c`` and sigma ``params.sigma_controller``;
    * ``tau^k`` is drawn uniformly from ``params.tau`` (the grid's RTT distribution),

    while queueing, transmission and propagation stay fixed. All three mechanisms
    see the same draws. Uses ``numpy.random.default_rng(seed)``: the same seed and
    parameters give the same study.
    """
    samples = parse_count(samples, "samples")
    rng = np.random.default_rng(seed)
    shape = (samples, params.n_switches)
    rtt = np.asarray(params.tau, dtype=float)
    groups = []
    for p_c in params.p_c:
        tau = rtt[rng.integers(0, len(rtt), size=shape)]
        p_sp = lognormal(rng, params.p_sp, params.sigma_switch, shape)
        p_sc = lognormal(rng, params.p_sc, params.sigma_switch, shape)
        p_c_draw = lognormal(rng, p_c, params.sigma_controller, shape)
        groups.append((tau, p_c_draw, p_sp, p_sc))
    return _study(params, "monte-carlo", groups, seed)


# ------------------------------------------------------------------------ summaries


@dataclass(frozen=True)
class Summary:
    """Order statistics of one mechanism at one controller delay (seconds).

    Median and 80th percentile use linear interpolation between order statistics
    (``numpy.percentile``'s default).
    """

    mechanism: Mechanism
    p_c: float
    minimum: float
    median: float
    maximum: float
    p80: float


def summarize(study: DelayStudy) -> tuple[Summary, ...]:
    """One :class:`Summary` per controller delay and mechanism (controller delay outer)."""
    rows = []
    for i, p_c in enumerate(study.p_c):
        for mechanism in Mechanism:
            values = study.delays(mechanism)[i]
            median, p80 = np.percentile(values, [50, 80])
            rows.append(Summary(mechanism, float(p_c), float(values.min()), float(median), float(values.max()), float(p80)))
    return tuple(rows)


def redundant_share(study: DelayStudy) -> np.ndarray:
    """Per controller delay ``(K,)``: the share of OpenFlow cases with a redundant packet-in.

    A case counts when the indicator of (3) is true at some hop.
    """
    return study.redundant.any(axis=2).mean(axis=1)


# --------------------------------------------------------------------------- claims


@dataclass(frozen=True)
class BarrierGapClaim:
    """Claim 1 of VIII.D: OpenFlow-B is slower than Attendre by about 1 ms in every case.

    Read as: every per-case gap ``T_b - T_a`` rounds to ``target`` at millisecond
    resolution, i.e. lies in ``[target - tolerance, target + tolerance)``.
    """

    min_gap: float
    max_gap: float
    target: float
    tolerance: float

    @property
    def holds(self) -> bool:
        return self.target - self.tolerance <= self.min_gap and self.max_gap < self.target + self.tolerance


@dataclass(frozen=True, eq=False)
class WorstBeatsBestClaim:
    """Claim 2: within each controller delay, the worst Attendre case beats the best OpenFlow-B case.

    ``worst_attendre`` and ``best_openflow_b`` are ``(K,)`` arrays.
    """

    p_c: np.ndarray
    worst_attendre: np.ndarray
    best_openflow_b: np.ndarray

    @property
    def holds(self) -> bool:
        return bool(np.all(self.worst_attendre < self.best_openflow_b))


@dataclass(frozen=True, eq=False)
class WorstBeatsShareClaim:
    """Claim 3: the worst Attendre case beats roughly 60% of the OpenFlow cases.

    Evaluated per controller delay: ``share[i]`` is the fraction of OpenFlow cases
    at ``p_c[i]`` strictly slower than the worst Attendre case at ``p_c[i]``. The
    claim holds when every share is at least ``threshold`` (60% less a tolerance
    for "roughly"; see :func:`check_claims`).
    """

    p_c: np.ndarray
    worst_attendre: np.ndarray
    share: np.ndarray
    threshold: float

    @property
    def holds(self) -> bool:
        return bool(np.all(self.share >= self.threshold))


@dataclass(frozen=True, eq=False)
class Claims:
    """The three claims of section VIII.D, checked on one study."""

    barrier_gap: BarrierGapClaim
    worst_beats_best: WorstBeatsBestClaim
    worst_beats_share: WorstBeatsShareClaim

    @property
    def all_hold(self) -> bool:
        return self.barrier_gap.holds and self.worst_beats_best.holds and self.worst_beats_share.holds


def check_claims(
    study: DelayStudy,
    gap_target: float = 1e-3,
    gap_tolerance: float = 0.5e-3,
    share_threshold: float = 0.55,
) -> Claims:
    """Check the claims of VIII.D on ``study``.

    * Claim 1 ("about 1 ms in every case"): every gap in ``[0.5, 1.5)`` ms by default.
    * Claim 2: per controller delay, ``max T_a < min T_b``.
    * Claim 3 ("better than 60% of the cases"): per controller delay, at least
      ``share_threshold`` of OpenFlow cases slower than the worst Attendre case;
      the default 0.55 reads "roughly 60%" as 60% within 5 percentage points.
    """
    gap = study.openflow_b - study.attendre
    worst_a = study.attendre.max(axis=1)
    share = (study.openflow > worst_a[:, None]).mean(axis=1)
    return Claims(
        barrier_gap=BarrierGapClaim(float(gap.min()), float(gap.max()), gap_target, gap_tolerance),
        worst_beats_best=WorstBeatsBestClaim(study.p_c, worst_a, study.openflow_b.min(axis=1)),
        worst_beats_share=WorstBeatsShareClaim(study.p_c, worst_a, share, share_threshold),
    )
