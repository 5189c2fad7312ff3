"""The :class:`Release`: what a curator publishes and an analyst consumes.

A release carries the noisy value, the invariants published exactly with it,
the exact noise law and the privacy guarantee, so that inference functions
never need to be told the noise again.  It round-trips through JSON exactly,
and it is immutable: its arrays are read-only, its parameter and metadata
dicts refuse mutation.

The JSON document (schema versions 1 to 3)
------------------------------------------
A release is read by :meth:`Release.from_json` (or :meth:`Release.from_dict`,
:meth:`Release.load`) only after the *whole* document has been validated
against the schema below; every error is an
:class:`~invariantdp.exceptions.InvariantDPError` (a ``ValueError``) naming
the field, e.g. ``ValueError: `noise.params.b` (2.0) must be in [0, 1).``
Nothing is allocated from a size the document merely declares.

Strict JSON (RFC 8259): ``NaN`` and ``Infinity`` are refused, as are
duplicate keys and numbers that overflow a float (``1e999``, refused with the
path of the field that holds them).  Limits: at most
``max_bytes`` of text (default :data:`MAX_JSON_BYTES`, 256 MiB), at most
``max_cells`` (default :data:`MAX_CELLS`, 2**24) entries in any array or
declared shape, nesting at most :data:`MAX_DEPTH` (32) levels in free-form
fields.  Every key listed is required unless marked optional; no other key is
allowed except inside ``metadata`` and guarantee ``params``.

``format``
    ``"invariantdp.Release"``.
``version``
    Integer, 1 to :data:`FORMAT_VERSION` (3); a newer version is refused.  A
    release is written in the oldest version that holds it: 1, 2 with labels
    or an unstated guarantee, 3 with a zCDP guarantee that records
    ``timing_tv`` (readers of 1 and 2 would take it for plain zCDP).
``value``, ``query`` (``query`` may be ``null``)
    An array: ``{"dtype", "shape", "data"}`` with ``dtype`` a little- or
    big-endian integer or float type of at most 8 bytes (``"<f8"``,
    ``"<i8"``, ...), ``shape`` a list of non-negative integers and ``data``
    the C-order flat list of ``prod(shape)`` finite numbers (integers within
    the dtype's range for an integer dtype; integers up to 2**53 for a float
    one).  ``query`` is 2-D float, of shape ``(value.size, prod(data_shape))``.
``mechanism``
    Non-empty string of at most 200 characters.
``data_shape``
    ``null`` or a shape.  Required with ``query`` or ``invariants``.  Without
    a ``query`` it may declare at most ``max(value.size, 65536)`` cells, so a
    small document cannot ask for large allocations.
``noise``
    ``{"family", "params"}``; the family must be known, with exactly these
    params (all numbers finite):

    ============================  =================================================
    family                        params
    ============================  =================================================
    ``laplace``, ``gaussian``     ``scale > 0``
    ``discrete_laplace``          ``scale > 0``
    ``discrete_gaussian``         ``sigma > 0``
    ``tulap``                     ``0 <= b < 1`` (0: the uniform limit of
                                  epsilon -> inf), ``0 <= q < 1``, optional
                                  ``scale > 0``
    ``knorm``                     ``norm`` in ``l1, l2, linf, polytope``, ``dim``
                                  (= ``value.size``), ``scale > 0``; a polytope
                                  has either ``space = {"kind": "contingency",
                                  "r", "c"}`` (``r, c >= 2``, ``r c = dim``) or
                                  ``vertices`` (``m x dim`` numbers)
    ``projected_gaussian``,       ``scale > 0``, ``invariants`` (an invariants
    ``projected_laplace``,        object with ``values`` null, acting on
    ``extended_gaussian``,        ``value.size`` cells, with the same ``C`` as
    ``extended_laplace``          the release's invariants)
    ``permutation``               ``0 < swap_rate < 1``, optional ``selection``
                                  and ``permutation`` (strings)
    ``grid_laplace``,             ``grid`` a power of two from ``2**-960``
    ``grid_gaussian``             to ``2**960``, ``scale > 0`` (Laplace) or
                                  ``sigma > 0`` (Gaussian): the noise of the
                                  secure Laplace and Gaussian mechanisms
    ``correlated_gaussian``       ``cov``: ``n`` lists of ``n`` numbers
                                  (``n = value.size``), symmetric positive
                                  semi-definite; noise in the null space of the
                                  invariants keeps them
    ============================  =================================================

    Families registered with :func:`~invariantdp.families.register_noise_family`
    bring their own ``schema``; any other family is refused.  The integer
    families (``discrete_*``, ``permutation``) need an integer-valued ``value``.
``guarantee``
    ``{"definition", "params", "adjacency", "semi_adjacent_parameter",
    "dataspace"}``: ``definition`` one of ``"epsilon-DP"`` (``epsilon``; a
    ``delta``, if present, is 0), ``"(epsilon, delta)-DP"`` (``epsilon``,
    ``delta``), ``"GDP"`` (``mu``), ``"zCDP"`` (``rho``), ``"f-DP"``
    (``tradeoff``: ``{"kind": "eps_delta", "epsilon" > 0, "delta"}``,
    ``{"kind": "gaussian", "mu" > 0}`` or ``{"kind": "group", "base", "k" >= 1}``),
    or ``"unstated"`` (version 2 only; no params: a published release whose
    guarantee the analyst cannot state, see :meth:`Release.from_published`).
    Known params must be in range (``epsilon >= 0``, ``0 <= delta < 1``,
    ``mu, rho, gamma > 0``, ``0 < swap_rate < 1``, ``b`` an integer >= 0,
    ``timing_tv`` and ``delta_per_coordinate`` in ``[0, 1)``,
    ``epsilon_per_coordinate >= 0``, ``coordinates_changed`` an integer
    >= 1); other params must be JSON scalars.  ``dataspace`` is a string,
    ``semi_adjacent_parameter`` ``null`` or an integer >= 1.  ``adjacency``
    states the neighbours: from version 4 an object ``{"norm", "sensitivity",
    "coordinates_changed", "space", "relation"}``
    (:class:`~invariantdp.privacy.QueryAdjacency`: ``norm`` one of ``l1, l2,
    linf, polytope, K``, ``sensitivity`` a number > 0, ``coordinates_changed``
    ``null`` or an integer >= 1, ``space`` a boolean, ``relation`` words),
    whose words are rendered from it; or words only, the adjacency of a
    guarantee a publisher states.  Words only are refused for a mechanism's
    release (its ``metadata`` records ``randomness`` or a ``sensitivity``)
    of a family whose claim is checked against its neighbours.  The
    ``sensitivity``, ``norm`` and ``coordinates_changed`` that ``metadata``
    or the guarantee's params may restate must be of the right type and
    range and equal the adjacency's.  A document of versions 1 to 3 (words
    only) is read with structured neighbours when its recorded norm and
    sensitivity render exactly its words, or its words are a relation those
    versions wrote with the numbers in the metadata; otherwise as words.
    The guarantee must be implied by the noise law for those neighbours
    (Tulap ``b`` and ``q`` against ``epsilon`` and ``delta``, a Laplace
    scale against the exact privacy profile, a discrete Gaussian ``sigma``
    against ``rho``, a swap's ``swap_rate`` and ``b`` against ``epsilon``,
    ``delta`` against ``timing_tv``, ...) and stated in a definition the
    noise supports: a document that overstates its privacy is refused with
    both numbers named (each family checks its own:
    :meth:`NoiseFamily.check_claim
    <invariantdp.families.NoiseFamily.check_claim>`, the table of
    :mod:`invariantdp.families._claims`).  A claim the family cannot check
    (neighbours in words only, a user family without a ``claim``) is read
    unchecked: :meth:`Release.check_guarantee` says which.
``invariants``
    ``null`` or an invariants object (:meth:`Invariants.from_dict
    <invariantdp.invariants.Invariants.from_dict>`): a structure must describe
    labels of exactly the stated shape, a general matrix must have in-range
    indices, values and names one entry per invariant, and the values must be
    consistent (margins sharing one total, nested totals adding up).  They act
    on ``prod(data_shape)`` cells.
``metadata`` (optional)
    A JSON object, free-form; ``randomness``, if present, is ``"secure"`` or
    ``"simulation"``; ``value_name``, if present, a string (the name of the
    values, a ``Series``' name such as ``"count"``); ``data_labels``, if
    present, the labels of the confidential data (of ``data_shape``, in the
    form of ``labels`` below) when the value is a query of them, such as the
    cell x11 of a labelled 2 x 2 table.
``labels`` (optional, version 2)
    One ``{"name", "labels"}`` object per dimension of ``value``: the axis
    name (a JSON scalar, null, or a list of them for a multi-level index) and
    exactly one label per entry along the axis (JSON scalars, or lists of the
    level count).  A release without labels and with a stated guarantee is
    written as version 1.

A release whose noise keeps the invariants (``projected_*``, ``extended_*``,
``permutation``, the contingency K-norm of ``semi_dp_knorm``, and the
conditional releases marked ``metadata.congenial``) must have a value that
satisfies them: ``|C value - c| <= 1e-8 (|C| |value| + |c|)`` row by row.
"""

from __future__ import annotations

import json
import operator
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._deprecation import moved_names
from .._label_text import value_name_of
from .._results import Summary, format_table, short_text, summarise_params
from .._validation import (
    InvariantDPError,
    format_value,
    freeze,
    parse_json_document,
    thaw,
)
from ..families import NoiseFamily, SchemaContext, noise_family
from ..invariants import Invariants
from ..labels import AxisLabels, check_labels, labels_to_doc
from ._document_schema import (
    FORMAT_VERSION,  # noqa: F401 - the newest document version this module reads
    MAX_CELLS,
    MAX_DEPTH,  # noqa: F401 - a documented limit of this module (docstring)
    MAX_JSON_BYTES,
    array_to_json,
    noise_from_doc,
    release_fields_from_doc,
)
from ._guarantee import PrivacyGuarantee
from ._published_fields import published_adjacency, published_fields
from ._release_labels import LabelledValues

__all__ = ["NoiseLaw", "PrivacyGuarantee", "Release"]

# register_noise_family's one home is invariantdp.families
__getattr__ = moved_names(
    __name__, {"register_noise_family": "invariantdp.families.register_noise_family"}
)


# ---------------------------------------------------------------------------
# noise laws (each family's law, schema and likelihood are in invariantdp.families)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NoiseLaw:
    """The exact law of the noise a mechanism added.

    Attributes
    ----------
    family : str
        Name of the family (``"tulap"``, ``"laplace"``, ``"gaussian"``, ...).
    params : dict
        Its parameters, JSON-able (e.g. ``{"b": 0.37, "q": 0.0}``); kept as a
        read-only deep copy.

    References
    ----------
    Gong & Meng, Definitions 1.1 and 1.2 (the Laplace and double-geometric
    noise laws); Canonne, Kamath & Steinke (2020) (the discrete Gaussian).

    Examples
    --------
    >>> law = NoiseLaw("laplace", {"scale": 2.0})
    >>> law.to_dict()
    {'family': 'laplace', 'params': {'scale': 2.0}}
    >>> round(float(law.distribution().std()), 4)
    2.8284
    """

    family: str
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.family, str):
            raise TypeError(f"`family` must be a string, got {type(self.family).__name__}.")
        if not isinstance(self.params, dict):
            raise TypeError(f"`params` must be a dict, got {type(self.params).__name__}.")
        object.__setattr__(self, "params", freeze(self.params))

    @property
    def spec(self) -> NoiseFamily:
        """The :class:`~invariantdp.families.NoiseFamily` of :attr:`family` (registered)."""
        return noise_family(self.family)

    def distribution(self):
        """The frozen scipy.stats-style distribution of the noise (of one coordinate, for
        the scalar families)."""
        return self.spec.law(self.params)

    def to_dict(self) -> dict:
        return {"family": self.family, "params": thaw(self.params)}

    @classmethod
    def from_dict(cls, d: dict, *, path: str = "noise", max_cells: int = MAX_CELLS) -> NoiseLaw:
        """Rebuild from :meth:`to_dict` output after validating it (see the module docstring)."""
        family, params, _ = noise_from_doc(path, d, SchemaContext(max_cells=max_cells))
        return NoiseLaw(family, params)


# ---------------------------------------------------------------------------
# the release
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Release(LabelledValues):
    """A differentially private release with its invariants.

    Attributes
    ----------
    value : numpy.ndarray
        The noisy released value (0-d for a scalar statistic); read-only.
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
        privatized (``value = query @ x.ravel() + noise``), if linear; read-only.
    data_shape : tuple of int or None
        Shape of the confidential data.
    metadata : dict
        Free-form JSON-able information (mechanism parameters, provenance),
        kept as a read-only deep copy.  ``metadata["randomness"]`` records
        the source of the noise (``"secure"`` or ``"simulation"``).
    labels : tuple of AxisLabels or None
        The index (and columns) of the value when the data were a pandas
        ``Series`` or ``DataFrame`` (:mod:`invariantdp.labels`); kept in the
        JSON and given back by :meth:`to_series` and :meth:`to_frame`.  A
        value that is a query of labelled data (the x11 of a 2 x 2 table)
        keeps the data's labels as :attr:`data_labels`, and a ``Series``'
        name is kept as :attr:`value_name`.

    References
    ----------
    Cho & Awan, Definition 12 (the joint release of ``M(X)`` and the
    invariants ``T(X) = t``); Gao, Gong & Yu (2022), Definitions 2 and 6 (a
    mechanism that satisfies linear invariants); its JSON: :mod:`invariantdp.release`.

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
    labels: tuple[AxisLabels, ...] | None = None

    def __post_init__(self):
        if not isinstance(self.noise, NoiseLaw):
            raise TypeError(f"`noise` must be a NoiseLaw, got {type(self.noise).__name__}.")
        if not isinstance(self.guarantee, PrivacyGuarantee):
            raise TypeError(
                f"`guarantee` must be a PrivacyGuarantee, got {type(self.guarantee).__name__}."
            )
        if self.invariants is not None and not isinstance(self.invariants, Invariants):
            raise TypeError(
                f"`invariants` must be an Invariants or None, got {type(self.invariants).__name__}."
            )
        if not isinstance(self.metadata, dict):
            raise TypeError(f"`metadata` must be a dict, got {type(self.metadata).__name__}.")
        value = np.array(self.value, copy=True)
        value.setflags(write=False)
        object.__setattr__(self, "value", value)
        if self.query is not None:
            q = np.array(self.query, dtype=float, copy=True)
            q.setflags(write=False)
            object.__setattr__(self, "query", q)
        if self.data_shape is not None:
            try:  # no int() coercion: a shape of 2.5 is an error, not 2
                shape = tuple(operator.index(s) for s in self.data_shape)
            except TypeError:
                shown = format_value(self.data_shape)
                raise TypeError(f"`data_shape` must be a tuple of integers, got {shown}.") from None
            object.__setattr__(self, "data_shape", shape)
        object.__setattr__(self, "metadata", freeze(self.metadata))
        object.__setattr__(self, "labels", check_labels(self.labels, value.shape))
        self._check_names()

    # --- serialisation -----------------------------------------------------

    def to_dict(self) -> dict:
        """The JSON document as a new, mutable dict (see the module docstring)."""
        doc = {
            "format": "invariantdp.Release",
            "version": self._version(),
            "value": array_to_json(self.value),
            "mechanism": self.mechanism,
            "noise": self.noise.to_dict(),
            "guarantee": self.guarantee.to_dict(),
            "invariants": None if self.invariants is None else self.invariants.to_dict(),
            "query": None if self.query is None else array_to_json(self.query),
            "data_shape": None if self.data_shape is None else list(self.data_shape),
            "metadata": thaw(self.metadata),
        }
        if self.labels is not None:
            doc["labels"] = labels_to_doc(self.labels)
        return doc

    def _version(self) -> int:
        """The oldest document version that holds this release (older readers read it)."""
        g = self.guarantee
        if g.neighbours is not None:
            return 4  # readers of versions 1 to 3 know the adjacency in words only
        if g.definition == "zCDP" and "timing_tv" in g.params:
            return 3  # readers of versions 1 and 2 would drop the run time's share
        # version 1 readers know neither labels nor an unstated guarantee
        return 1 if self.labels is None and g.definition != "unstated" else 2

    @classmethod
    def from_dict(cls, d: dict, *, max_cells: int = MAX_CELLS) -> Release:
        """Rebuild a release from :meth:`to_dict` output, validating the whole document.

        Raises ``InvariantDPError`` (a ``ValueError``) naming the first field
        that breaks the schema of the module docstring; the input is never
        modified.  ``max_cells`` bounds every array and declared shape.
        """
        fields = release_fields_from_doc(d, max_cells)
        fields["noise"] = NoiseLaw(*fields["noise"])
        fields["guarantee"] = PrivacyGuarantee(*fields["guarantee"])
        return Release(**fields)

    def to_json(self, **kwargs) -> str:
        """Serialise to a strict JSON string (RFC 8259); floats are written exactly."""
        return json.dumps(self.to_dict(), allow_nan=False, **kwargs)

    @classmethod
    def from_published(
        cls,
        values,
        *,
        noise,
        invariants: Invariants | None = None,
        guarantee: PrivacyGuarantee | None = None,
        query=None,
        data_shape=None,
        mechanism: str = "published",
        metadata: dict | None = None,
        **params,
    ) -> Release:
        """A release from published noisy values, noise law and invariants.

        Parameters
        ----------
        values : array_like, pandas.Series or pandas.DataFrame
            The noisy values as published.  The index (and columns) of a pandas
            object are kept as the release's labels.
        noise : str or NoiseLaw
            The noise family (``"discrete_gaussian"``, ``"gaussian"``,
            ``"discrete_laplace"``, ``"laplace"``, ``"tulap"``, or any family
            registered with a schema, given its own parameters) or a ready
            :class:`NoiseLaw`.
        invariants : Invariants, optional
            The statistics published exactly, with their values
            (``totals(...).of(true_totals)`` or an :class:`Invariants` with
            ``values``); they act on the cells of ``values`` (C order).
        guarantee : PrivacyGuarantee, optional
            The privacy guarantee, when the noise parameters do not imply one.
        query : array_like, shape (values.size, prod(data_shape)), optional
            The linear query of the confidential data that was released, when the
            values are not the data cells themselves (e.g. ``[[1, 0, 0, 0]]``: the
            cell x11 of a 2 x 2 table); the invariants then act on the data.
        data_shape : tuple of int, optional
            Shape of the confidential data (default: the shape of ``values``, or
            the invariants' shape when a ``query`` is given).
        mechanism : str
            Name recorded for the mechanism.
        metadata : dict, optional
            Provenance to record (source, table, vintage).
        **params
            The noise in the agency's terms (see the module docstring):
            ``variance``, ``sigma``, ``rho``, ``scale``, ``epsilon``, ``delta``,
            ``sensitivity``, or a family's own parameters.

        Returns
        -------
        Release
            With ``metadata["source"] = "published"`` (and the name of a
            ``Series`` of values as ``metadata["value_name"]``); ``query``
            None (the identity) unless given.

        Raises
        ------
        InvariantDPError
            Before anything is built: parameters that do not determine the law,
            invariants without values or of another size, non-integer values for
            an integer family.

        References
        ----------
        Canonne, Kamath & Steinke (2020), Thm. 14; Bun & Steinke (2016),
        Prop. 1.6; Gao, Gong & Yu (2022), Section 2 (invariants).

        Examples
        --------
        >>> r = Release.from_published([10.5, 3.2], noise="gaussian", variance=4.0)
        >>> dict(r.noise.params), r.guarantee.definition
        ({'scale': 2.0}, 'unstated')
        """
        if isinstance(noise, NoiseLaw):
            if params:
                raise InvariantDPError(
                    f"`noise` is a NoiseLaw already; do not also pass {sorted(params)}."
                )
            family, given, own = noise.family, thaw(noise.params), True
        else:
            family, given, own = noise, params, False
        if guarantee is not None and not isinstance(guarantee, PrivacyGuarantee):
            raise TypeError(
                f"`guarantee` must be a PrivacyGuarantee, got {type(guarantee).__name__}."
            )
        name = value_name_of(values)
        if name is not None and "value_name" not in (metadata or {}):
            metadata = {**(metadata or {}), "value_name": name}
        fields = published_fields(
            values,
            family,
            given,
            own=own,
            invariants=invariants,
            query=query,
            data_shape=data_shape,
            metadata=metadata,
        )
        implied = fields.pop("implied") or ("unstated", {})
        if guarantee is None:
            guarantee = PrivacyGuarantee(
                *implied,
                published_adjacency(family, *fields["noise"][1:], implied),
                None,
                "as published",
            )
        fields["noise"] = NoiseLaw(*fields["noise"])
        return cls(mechanism=mechanism, guarantee=guarantee, **fields)

    @classmethod
    def from_json(
        cls, text, *, max_bytes: int = MAX_JSON_BYTES, max_cells: int = MAX_CELLS
    ) -> Release:
        """Rebuild a release from :meth:`to_json` output (strict JSON, validated).

        ``text`` is refused if longer than ``max_bytes`` before it is parsed;
        ``NaN``/``Infinity``, overflowing numbers, duplicate keys and deep
        nesting are refused while parsing; the document is then validated as by
        :meth:`from_dict`.
        """
        return cls.from_dict(parse_json_document(text, max_bytes), max_cells=max_cells)

    def save(self, path) -> Path:
        """Write the JSON to ``path`` atomically (temporary file + rename).

        The file gets the permissions of an ordinary new file
        (``0o666 & ~umask``), not the ``0o600`` of the temporary file.
        """
        path = Path(path)
        text = self.to_json(indent=1)
        # the umask can only be read by setting it; restore it at once
        mask = os.umask(0o022)
        os.umask(mask)
        fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.", suffix=".tmp")
        try:
            os.fchmod(fd, 0o666 & ~mask)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return path

    @classmethod
    def load(cls, path, *, max_bytes: int = MAX_JSON_BYTES, max_cells: int = MAX_CELLS) -> Release:
        """Read a release saved by :meth:`save`, refusing files over ``max_bytes`` unread.

        Only regular files are read (a FIFO or device could stream forever);
        a missing or unreadable file raises ``OSError``.
        """
        path = Path(path)
        # stat before opening: opening a FIFO blocks until someone writes to it
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise InvariantDPError(f"`path` ({format_value(str(path))}) is not a regular file.")
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > max_bytes:
                raise InvariantDPError(
                    f"`path` ({format_value(str(path))}) has {size} bytes; at most "
                    f"{max_bytes} are allowed (`max_bytes`)."
                )
            data = fh.read(max_bytes + 1)  # the file may have grown since
        return cls.from_json(data, max_bytes=max_bytes, max_cells=max_cells)

    # --- labels and pandas (invariantdp.release._release_labels) ----------------------
    # named here too, so that the API pages (which list a class's own members) show them
    value_name = LabelledValues.value_name
    data_labels = LabelledValues.data_labels
    to_series = LabelledValues.to_series
    to_frame = LabelledValues.to_frame

    # --- taking part of a release --------------------------------------------

    def select(self, **levels) -> Release:
        """The release of the kept cells: ``select(age=["18-64", "65+"])``.

        Each keyword names an axis of :attr:`labels` (or a level of a
        ``MultiIndex`` axis) and the labels to keep along it; the cells kept
        are those whose labels are among them on every named axis.  Keeping
        part of a release is post-processing, so the guarantee stands.

        Parameters
        ----------
        **levels : sequence
            ``axis_name=[label, ...]``: the labels to keep (in the release's
            order; each must be a label of that axis).

        Returns
        -------
        Release
            The kept cells, their labels, the marginal law of their noise
            (the same family and parameters for the coordinatewise
            independent families; the sub-matrix of ``cov`` for
            ``correlated_gaussian``) and the invariants that still bind:
            every invariant row that touches only kept cells.  A row that
            touches a dropped cell is dropped (what it says of the kept
            cells depends on the dropped ones), and
            ``metadata["selected_from"]`` records the selection.

        Raises
        ------
        InvariantDPError
            Before anything is built: no keyword, a release without labels or
            a ``query`` (its value is not the cells), an unknown axis, a label
            not on its axis, a selection that keeps no cell, or a noise whose
            marginal is not of its own family (projected, extended, K-norm,
            swap).

        References
        ----------
        Gao, Gong & Yu (2022), Definition 2 (linear invariants ``C x = c``:
        a row of ``C`` zero on the dropped cells is an invariant of the kept
        ones); the marginal of a multivariate normal is normal with the
        sub-covariance (Anderson, *An Introduction to Multivariate
        Statistical Analysis*, Thm. 2.4.3).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from invariantdp.invariants import Invariants
        >>> x = pd.Series([5.0, 9.0, 3.0], index=pd.Index(["0-17", "18-64", "65+"], name="age"))
        >>> cov = np.array([[2.0, 0.5, 0.0], [0.5, 2.0, 0.5], [0.0, 0.5, 2.0]])
        >>> r = Release.from_published(x, noise="correlated_gaussian", cov=cov)
        >>> s = r.select(age=["18-64", "65+"])
        >>> s.to_series().to_dict()
        {'18-64': 9.0, '65+': 3.0}
        >>> np.asarray(s.noise.params["cov"]).tolist()
        [[2.0, 0.5], [0.5, 2.0]]
        """
        if not levels:
            raise InvariantDPError("`select` needs at least one `axis=[labels]` keyword.")
        if self.labels is None:
            raise InvariantDPError(
                "`select` needs a labelled release (`labels` is None): name cells by their labels."
            )
        if self.query is not None:
            raise InvariantDPError(
                "`select` keeps cells of a release of the cells themselves; this one "
                "releases a `query` of the data."
            )
        family, params = self.noise.family, thaw(self.noise.params)
        # a law that keeps invariants or is joint over the whole vector (a K-norm's
        # ``dim``) has marginals outside its family; a ``cov`` is sliced; any other
        # family's params describe each cell's noise alike
        if self.noise.spec.keeps_invariants or "dim" in params:
            raise InvariantDPError(
                f"`select` cannot keep part of a `{family}` release: the marginal of its "
                "noise is not a law of its own family (the noise is joint over every cell "
                "or keeps invariants of the dropped cells)."
            )
        keep = [np.ones(len(ax.labels), dtype=bool) for ax in self.labels]
        for attr, wanted in levels.items():
            axis, mask = self._select_axis(attr, wanted)
            keep[axis] &= mask
        positions = [np.flatnonzero(k) for k in keep]
        if any(p.size == 0 for p in positions):
            raise InvariantDPError(f"`select` ({format_value(levels)}) keeps no cell.")
        grid = np.ix_(*positions)
        shape = tuple(p.size for p in positions)
        flat = np.arange(self.value.size).reshape(self.value.shape)[grid].ravel()
        if "cov" in params:
            cov = np.asarray(params["cov"], dtype=float)
            params["cov"] = cov[np.ix_(flat, flat)].tolist()
        labels = tuple(
            AxisLabels(ax.name, tuple(ax.labels[i] for i in p))
            for ax, p in zip(self.labels, positions, strict=True)
        )
        metadata = thaw(self.metadata)
        metadata["selected_from"] = {
            str(k): [v.item() if isinstance(v, np.generic) else v for v in w]
            for k, w in levels.items()
        }
        return Release(
            value=self.value[grid],
            mechanism=self.mechanism,
            noise=NoiseLaw(family, params),
            guarantee=self.guarantee,
            invariants=self._invariants_of(flat, shape),
            query=None,
            data_shape=shape,
            metadata=metadata,
            labels=labels,
        )

    def _select_axis(self, attr: str, wanted) -> tuple[int, np.ndarray]:
        """The axis ``attr`` names and the mask of its positions whose label is in ``wanted``."""
        if isinstance(wanted, str) or not hasattr(wanted, "__iter__"):
            raise InvariantDPError(
                f"`{attr}` ({format_value(wanted)}) must be a list of labels to keep."
            )
        wanted = list(wanted)
        found = [
            (
                axis,
                list(ax.labels)
                if ax.name == attr
                else [lab[ax.name.index(attr)] for lab in ax.labels],
            )
            for axis, ax in enumerate(self.labels)
            if ax.name == attr or (isinstance(ax.name, tuple) and attr in ax.name)
        ]
        if not found:
            names = [ax.name for ax in self.labels]
            raise InvariantDPError(
                f"`{attr}` is not an axis (or level) of the release; its axes are "
                f"{format_value(names)}."
            )
        axis, present = found[0]
        known = set(present)
        missing = [w for w in wanted if w not in known]
        if missing:
            raise InvariantDPError(
                f"`{attr}` ({format_value(missing)}) names labels not on the axis; its "
                f"labels are {format_value(sorted(known, key=str))}."
            )
        chosen = set(wanted)
        return axis, np.fromiter((p in chosen for p in present), dtype=bool, count=len(present))

    def _invariants_of(self, flat: np.ndarray, shape: tuple[int, ...]) -> Invariants | None:
        """The invariant rows that touch only the cells ``flat``, on those cells."""
        inv = self.invariants
        if inv is None:
            return None
        C = inv.matrix  # dense or sparse: both take abs() and @
        dropped = np.ones(C.shape[1])
        dropped[flat] = 0.0
        rows = np.flatnonzero(np.asarray(abs(C) @ dropped).ravel() == 0)
        if rows.size == 0:
            return None
        sub = C[np.ix_(rows, flat)] if isinstance(C, np.ndarray) else C.tocsr()[rows][:, flat]
        values = None if inv.values is None else inv.values[rows]
        names = None if inv.names is None else [inv.names[i] for i in rows]
        return Invariants(sub, values=values, shape=shape, names=names)

    # --- provenance -----------------------------------------------------------

    def check_guarantee(self) -> bool:
        """Whether the guarantee is checked against the noise law: True, or False if unchecked.

        The noise family checks that the recorded guarantee is implied by the
        noise law (:meth:`NoiseFamily.check_claim
        <invariantdp.families.NoiseFamily.check_claim>`), as
        :meth:`from_json` does: a guarantee that claims more privacy than the
        noise gives raises :class:`~invariantdp.exceptions.InvariantDPError`.
        False means the family could not tell: no recorded sensitivity (a
        release from published numbers), a definition its check does not
        cover, or a family registered without a ``claim``.

        Examples
        --------
        >>> from invariantdp.mechanisms import laplace_mechanism
        >>> laplace_mechanism([1.0, 2.0], epsilon=1.0, rng=0).check_guarantee()
        True
        >>> Release.from_published([3.0], noise="laplace", scale=2.0).check_guarantee()
        True
        >>> Release.from_published(
        ...     [3.0], noise="laplace", scale=2.0,
        ...     guarantee=PrivacyGuarantee("epsilon-DP", {"epsilon": 1.0}, "stated", None, ""),
        ... ).check_guarantee()  # no sensitivity recorded: nothing to check the scale against
        False
        """
        g = self.guarantee
        return self.noise.spec.check_claim(
            self.noise.params, g.definition, g.params, self.metadata, g.neighbours
        )

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

    def summary(self) -> Summary:
        """A short table: one line per field, the values on their labels, long ones abbreviated.

        A labelled release shows its axes (``labels``) and each value on its
        cell (``"C01, F: 347; C01, M: 1066; ..."``), named margins and totals
        likewise; a release of one cell of labelled data names that cell.

        Examples
        --------
        >>> import pandas as pd
        >>> from invariantdp.mechanisms import discrete_laplace_mechanism
        >>> x = pd.Series([347, 1066], index=pd.Index(["F", "M"], name="sex"), name="count")
        >>> r = discrete_laplace_mechanism(x, epsilon=1.0, rng=3)
        >>> r.summary().as_dict()["labels"]
        'sex (F, M)'
        >>> r.summary().as_dict()["value (count)"]
        'F: 346; M: 1066'
        """
        rows = [
            ("mechanism", short_text(self.mechanism)),
            (
                "randomness",
                "SIMULATION (numpy generator): not for publication"
                if self.simulation
                else short_text(self.metadata.get("randomness", "not recorded")),
            ),
            *self._value_rows(),
            ("noise", f"{self.noise.family} {summarise_params(self.noise.params)}"),
            ("guarantee", self.guarantee.describe()),
            ("adjacency", short_text(self.guarantee.adjacency, 200)),
            *self._invariant_rows(),
        ]
        return format_table("Differentially private release", rows)

    def __repr__(self) -> str:
        return (
            f"Release(mechanism={self.mechanism!r}, "
            f"value={np.array2string(self.value, threshold=6)}, "
            f"noise={self.noise.family}, guarantee={self.guarantee.describe()!r})"
        )
