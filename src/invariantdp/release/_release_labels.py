"""What a :class:`~invariantdp.Release` says of its labels: names, pandas views, summary rows.

A release made from labelled data keeps its labels (:attr:`Release.labels
<invariantdp.Release.labels>`), the name of its values
(``metadata["value_name"]``, a ``Series``' name such as ``"count"``) and,
when its value is a query of the data (the x11 of a 2 x 2 table), the
labels of the data (``metadata["data_labels"]``).  :class:`LabelledValues`
gives them back (:attr:`~invariantdp.release.Release.value_name`,
:attr:`~invariantdp.release.Release.data_labels`,
:meth:`~invariantdp.release.Release.to_series`,
:meth:`~invariantdp.release.Release.to_frame`) and names every value in the release's
summary; the text itself is written by :mod:`invariantdp._label_text`.
Split from :mod:`invariantdp.release`, whose ``Release`` inherits it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._label_text import axes_text, invariant_names, named_values, two_by_two_text
from .._validation import InvariantDPError, format_value, thaw
from ..labels import AxisLabels, cell_names, labels_from_doc, to_pandas

__all__ = ["LabelledValues"]


class LabelledValues:
    """The labels of a release's values (a mixin of :class:`~invariantdp.Release`).

    It reads the release's ``value``, ``labels``, ``metadata``,
    ``data_shape``, ``query`` and ``invariants``.

    References
    ----------
    :mod:`invariantdp.release`, "The JSON document", fields ``labels`` and
    ``metadata`` (``value_name``, ``data_labels``).
    """

    def _check_names(self) -> None:
        """``metadata["value_name"]`` and ``["data_labels"]``, when present, fit the release."""
        name = self.metadata.get("value_name")
        if name is not None and not isinstance(name, str):
            raise InvariantDPError(
                f"`metadata.value_name` ({format_value(name)}) must be a string (the name of "
                "the values)."
            )
        doc = self.metadata.get("data_labels")
        if doc is not None:
            if self.data_shape is None:
                raise InvariantDPError(
                    "`metadata.data_labels` needs the `data_shape` of the data they label."
                )
            labels_from_doc("metadata.data_labels", thaw(doc), self.data_shape)

    @property
    def value_name(self) -> str:
        """The name of the values: that of the ``Series`` they were made from, else ``"value"``.

        Recorded as ``metadata["value_name"]`` by the mechanisms and
        :meth:`~invariantdp.release.Release.from_published`; :meth:`to_series`
        and :meth:`to_frame` name the values by it.

        Examples
        --------
        >>> import pandas as pd
        >>> from invariantdp import Release
        >>> x = pd.Series([120, 80], index=pd.Index(["Ada", "Bay"], name="county"), name="count")
        >>> Release.from_published(x, noise="discrete_gaussian", variance=4.0).value_name
        'count'
        """
        return self.metadata.get("value_name") or "value"

    @property
    def data_labels(self) -> tuple[AxisLabels, ...] | None:
        """The labels of the confidential data: :attr:`labels`, or those recorded for a query.

        A release whose value is a query of labelled data (the x11 of a 2 x 2
        table given as a ``DataFrame``) keeps the data's labels in
        ``metadata["data_labels"]``; a release of the data themselves has
        them as :attr:`labels`.  None when the data had no labels.

        Examples
        --------
        >>> import pandas as pd
        >>> from invariantdp.mechanisms import odds_ratio_release
        >>> t = pd.DataFrame([[12, 5], [4, 9]], index=pd.Index(["a", "b"], name="group"),
        ...                  columns=["yes", "no"])
        >>> r = odds_ratio_release(t, epsilon=1.0, rng=1)
        >>> r.labels is None, r.data_labels[0]
        (True, AxisLabels(name='group', labels=('a', 'b')))
        """
        doc = self.metadata.get("data_labels")
        if doc is not None:
            return labels_from_doc("metadata.data_labels", thaw(doc), self.data_shape)
        if self.labels is not None and self.data_shape == self.value.shape:
            return self.labels
        return None

    def to_series(self) -> pd.Series:
        """The value as a ``Series`` on its labels (the product of the axes for a table).

        The ``Series`` is named by :attr:`value_name`: the name of the values
        the release was made from (``"count"``), or ``"value"``.

        Examples
        --------
        >>> import pandas as pd
        >>> from invariantdp import Release
        >>> x = pd.Series([120, 80], index=pd.Index(["Ada", "Bay"], name="county"), name="count")
        >>> r = Release.from_published(x, noise="discrete_gaussian", variance=4.0)
        >>> r.to_series()
        county
        Ada    120
        Bay     80
        Name: count, dtype: int64
        """
        out = to_pandas(self.value, self.labels)
        if isinstance(out, pd.DataFrame):
            out = out.stack(future_stack=True)
        return out.rename(self.value_name)

    def to_frame(self) -> pd.DataFrame:
        """The value as a ``DataFrame``: the table itself for a 2-D value, else one
        column named by :attr:`value_name` on the labels."""
        out = to_pandas(self.value, self.labels)
        return out if isinstance(out, pd.DataFrame) else out.to_frame(self.value_name)

    def _value_names(self) -> list[str] | None:
        """Names of the released entries: their labels, or the data cells a query selects."""
        if self.labels is not None:
            return cell_names(self.labels, self.value.shape)
        axes, q = self.data_labels, self.query
        if axes is None:
            return None
        cells = cell_names(axes, self.data_shape)
        if q is None:  # the data themselves, reshaped
            return cells if len(cells) == self.value.size else None
        one_cell = (np.count_nonzero(q, axis=1) == 1) & np.isclose(q.sum(axis=1), 1.0)
        if not one_cell.all():
            return None
        return [cells[j] for j in np.argmax(q != 0, axis=1)]

    def _value_rows(self) -> list[tuple[str, str]]:
        """The summary's rows of the axes and of the values on their cells."""
        names = self._value_names()
        if names is None:
            shown = np.array2string(self.value, precision=4, threshold=12)
        else:
            shown = named_values(names, self.value)
        rows = []
        if self.labels is not None:
            rows.append(("labels", axes_text(self.labels)))
        elif self.data_labels is not None:
            rows.append(("data labels", axes_text(self.data_labels)))
        name = self.value_name
        rows.append(("value" if name == "value" else f"value ({name})", shown))
        return rows

    def _invariant_rows(self) -> list[tuple[str, str]]:
        """The summary's rows of what a 2 x 2 table's odds ratio compares and of the invariants."""
        rows = []
        axes = self.data_labels
        if self.metadata.get("statistic") == "x11" and self.data_shape == (2, 2):
            # the x11 of a 2 x 2 table (odds_ratio_release): which way its odds ratio points
            rows.append(("odds ratio", two_by_two_text(axes).odds_ratio))
        inv = self.invariants
        if inv is not None and inv.values is not None:
            names = invariant_names(inv, axes)
            shown = (
                np.array2string(inv.values, precision=6, threshold=12)
                if names is None
                else named_values(names, inv.values, decimals=6)
            )
            rows.append(("invariants", shown))
        return rows
