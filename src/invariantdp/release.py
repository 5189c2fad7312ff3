"""The :class:`Release`: what a curator publishes and an analyst consumes.

A release carries the noisy value, the invariants published exactly with it,
the exact noise law and the privacy guarantee, so that inference functions
never need to be told the noise again.  It round-trips through JSON exactly.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats

from ._validation import InvariantDPError
from .invariants import Invariants
from .privacy.tradeoff import TradeoffFunction, eps_delta, gaussian

__all__ = ["NoiseLaw", "PrivacyGuarantee", "Release", "register_noise_family"]

FORMAT_VERSION = 1


# ---------------------------------------------------------------------------
# noise laws
# ---------------------------------------------------------------------------

_NOISE_FAMILIES: dict[str, Callable[[dict], object]] = {}


def register_noise_family(name: str, factory: Callable[[dict], object]) -> None:
    """Register ``factory(params) -> frozen distribution`` for a noise family.

    Mechanism modules call this so that :meth:`NoiseLaw.distribution` can
    rebuild the law of a release loaded from JSON.
    """
    _NOISE_FAMILIES[name] = factory


def _tulap_factory(p):
    from .distributions import tulap

    return tulap(p["b"], p["q"], loc=0.0, scale=p.get("scale", 1.0))


register_noise_family("tulap", _tulap_factory)
register_noise_family("laplace", lambda p: stats.laplace(loc=0.0, scale=p["scale"]))
register_noise_family("gaussian", lambda p: stats.norm(loc=0.0, scale=p["scale"]))


@dataclass(frozen=True)
class NoiseLaw:
    """The exact law of the noise a mechanism added.

    Attributes
    ----------
    family : str
        Name of the family (``"tulap"``, ``"laplace"``, ``"gaussian"``, ...).
    params : dict
        Its parameters, JSON-able (e.g. ``{"b": 0.37, "q": 0.0}``).
    """

    family: str
    params: dict = field(default_factory=dict)

    def distribution(self):
        """The frozen scipy.stats-style distribution of one noise coordinate."""
        try:
            factory = _NOISE_FAMILIES[self.family]
        except KeyError:
            raise InvariantDPError(
                f"noise family {self.family!r} has no registered distribution; "
                f"known: {sorted(_NOISE_FAMILIES)}."
            ) from None
        return factory(self.params)

    def to_dict(self) -> dict:
        return {"family": self.family, "params": dict(self.params)}

    @classmethod
    def from_dict(cls, d: dict) -> NoiseLaw:
        return cls(d["family"], dict(d["params"]))


# ---------------------------------------------------------------------------
# privacy guarantees
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PrivacyGuarantee:
    """A privacy guarantee ``(D, A, f)``: dataspace, adjacency, privacy level.

    Attributes
    ----------
    definition : str
        ``"f-DP"`` (with ``params["tradeoff"]``), ``"(epsilon, delta)-DP"``,
        ``"GDP"``, ``"zCDP"`` or ``"epsilon-DP"``.
    params : dict
        The privacy parameters (``epsilon``, ``delta``, ``mu``, ``rho``, ...).
    adjacency : str
        The adjacency relation, in words (e.g. ``"semi-adjacent"``).
    semi_adjacent_parameter : int or None
        ``a(t)`` of Cho & Awan (Def. 13) when the guarantee is semi-DP: the
        guarantee holds for invariant-conforming data sets at distance
        ``a(t)`` in the base adjacency.
    dataspace : str
        The data space, in words (e.g. ``"2x2 tables with these one-way margins"``).
    """

    definition: str
    params: dict = field(default_factory=dict)
    adjacency: str = "add/remove or replace one record"
    semi_adjacent_parameter: int | None = None
    dataspace: str = ""

    def tradeoff(self) -> TradeoffFunction:
        """The tradeoff function ``f`` that the guarantee asserts."""
        p = self.params
        if self.definition == "f-DP":
            return TradeoffFunction.from_dict(p["tradeoff"])
        if self.definition in ("(epsilon, delta)-DP", "epsilon-DP"):
            return eps_delta(p["epsilon"], p.get("delta", 0.0))
        if self.definition == "GDP":
            return gaussian(p["mu"])
        raise InvariantDPError(
            f"a {self.definition} guarantee has no single tradeoff function; "
            "convert it with invariantdp.privacy first."
        )

    def to_dict(self) -> dict:
        return {
            "definition": self.definition,
            "params": dict(self.params),
            "adjacency": self.adjacency,
            "semi_adjacent_parameter": self.semi_adjacent_parameter,
            "dataspace": self.dataspace,
        }

    @classmethod
    def from_dict(cls, d: dict) -> PrivacyGuarantee:
        return cls(
            d["definition"],
            dict(d["params"]),
            d["adjacency"],
            d["semi_adjacent_parameter"],
            d["dataspace"],
        )

    def describe(self) -> str:
        params = ", ".join(f"{k}={v:g}" for k, v in self.params.items() if _is_num(v))
        out = f"{self.definition} ({params})" if params else self.definition
        if self.semi_adjacent_parameter is not None:
            out += f", semi-DP with a(t)={self.semi_adjacent_parameter}"
        return out


def _is_num(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


# ---------------------------------------------------------------------------
# arrays in JSON: exact (Python floats serialise by repr, which round-trips)
# ---------------------------------------------------------------------------


def _array_to_json(a: np.ndarray) -> dict:
    a = np.asarray(a)
    return {
        "dtype": a.dtype.str,
        "shape": list(a.shape),
        "data": a.reshape(-1).tolist(),
    }


def _array_from_json(d: dict) -> np.ndarray:
    return np.array(d["data"], dtype=np.dtype(d["dtype"])).reshape(d["shape"])


# ---------------------------------------------------------------------------
# the release
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Release:
    """A differentially private release with its invariants.

    Attributes
    ----------
    value : numpy.ndarray
        The noisy released value (0-d for a scalar statistic).
    mechanism : str
        Name of the mechanism that produced it (e.g. ``"odds_ratio_release"``).
    noise : NoiseLaw
        Exact law of the noise added to the query.
    guarantee : PrivacyGuarantee
        The privacy guarantee, including the data space and adjacency.
    invariants : Invariants or None
        Statistics of the confidential data published exactly, with values.
    query : numpy.ndarray or None
        Matrix of the linear query of the flattened confidential data that was
        privatized (``value = query @ x.ravel() + noise``), if linear.
    data_shape : tuple of int or None
        Shape of the confidential data.
    metadata : dict
        Free-form JSON-able information (mechanism parameters, provenance).

    Examples
    --------
    >>> from invariantdp.mechanisms import odds_ratio_release
    >>> r = odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, rng=1)
    >>> Release.from_json(r.to_json()) == r
    True
    """

    value: np.ndarray
    mechanism: str
    noise: NoiseLaw
    guarantee: PrivacyGuarantee
    invariants: Invariants | None = None
    query: np.ndarray | None = None
    data_shape: tuple[int, ...] | None = None
    metadata: dict = field(default_factory=dict)

    def __post_init__(self):
        value = np.array(self.value, copy=True)
        value.setflags(write=False)
        object.__setattr__(self, "value", value)
        if self.query is not None:
            q = np.array(self.query, dtype=float, copy=True)
            q.setflags(write=False)
            object.__setattr__(self, "query", q)
        if self.data_shape is not None:
            object.__setattr__(self, "data_shape", tuple(int(s) for s in self.data_shape))

    # --- serialisation -----------------------------------------------------

    def to_dict(self) -> dict:
        return {
            "format": "invariantdp.Release",
            "version": FORMAT_VERSION,
            "value": _array_to_json(self.value),
            "mechanism": self.mechanism,
            "noise": self.noise.to_dict(),
            "guarantee": self.guarantee.to_dict(),
            "invariants": None if self.invariants is None else self.invariants.to_dict(),
            "query": None if self.query is None else _array_to_json(self.query),
            "data_shape": None if self.data_shape is None else list(self.data_shape),
            "metadata": self.metadata,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Release:
        if d.get("format") != "invariantdp.Release":
            raise InvariantDPError(f"not an invariantdp release: `format` is {d.get('format')!r}.")
        if d.get("version", 0) > FORMAT_VERSION:
            raise InvariantDPError(
                f"release format version {d['version']} is newer than this package "
                f"reads ({FORMAT_VERSION}); upgrade invariantdp."
            )
        return cls(
            value=_array_from_json(d["value"]),
            mechanism=d["mechanism"],
            noise=NoiseLaw.from_dict(d["noise"]),
            guarantee=PrivacyGuarantee.from_dict(d["guarantee"]),
            invariants=None if d["invariants"] is None else Invariants.from_dict(d["invariants"]),
            query=None if d["query"] is None else _array_from_json(d["query"]),
            data_shape=None if d["data_shape"] is None else tuple(d["data_shape"]),
            metadata=d.get("metadata", {}),
        )

    def to_json(self, **kwargs) -> str:
        """Serialise to a JSON string; floats are written exactly."""
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    @classmethod
    def from_json(cls, text: str) -> Release:
        """Rebuild a release from :meth:`to_json` output."""
        return cls.from_dict(json.loads(text))

    def save(self, path) -> Path:
        """Write the JSON to ``path`` atomically (temporary file + rename)."""
        path = Path(path)
        text = self.to_json(indent=1)
        fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return path

    @classmethod
    def load(cls, path) -> Release:
        return cls.from_json(Path(path).read_text(encoding="utf-8"))

    # --- provenance -----------------------------------------------------------

    @property
    def simulation(self) -> bool:
        """True if the noise came from a ``numpy.random.Generator`` (not for publication).

        Mechanisms record their source of randomness in
        ``metadata["randomness"]`` (``"secure"`` or ``"simulation"``); see
        :mod:`invariantdp.mechanisms._base` for why a seeded or numpy-drawn
        release must never be published.
        """
        return self.metadata.get("randomness") == "simulation"

    # --- comparison and display ---------------------------------------------

    def __eq__(self, other) -> bool:
        if not isinstance(other, Release):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None

    def summary(self) -> str:
        from ._results import format_table

        rows = [
            ("mechanism", self.mechanism),
            (
                "randomness",
                "SIMULATION (numpy generator): not for publication"
                if self.simulation
                else self.metadata.get("randomness", "not recorded"),
            ),
            ("value", np.array2string(self.value, precision=4, threshold=12)),
            ("noise", f"{self.noise.family} {self.noise.params}"),
            ("guarantee", self.guarantee.describe()),
            ("adjacency", self.guarantee.adjacency),
        ]
        if self.invariants is not None and self.invariants.values is not None:
            rows.append(
                (
                    "invariants",
                    np.array2string(self.invariants.values, precision=6, threshold=12),
                )
            )
        return format_table("Differentially private release", rows)

    def __repr__(self) -> str:
        return (
            f"Release(mechanism={self.mechanism!r}, "
            f"value={np.array2string(self.value, threshold=6)}, "
            f"noise={self.noise.family}, guarantee={self.guarantee.describe()!r})"
        )
