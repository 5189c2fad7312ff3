"""Loaders for the data bundled with the package.

The CSV files live in the repository's ``data/`` folder, whose ``README.md``
states the source of each, and are installed inside the package as
``invariantdp/_data``; they are read with :mod:`importlib.resources`.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd

from ._validation import InvariantDPError

__all__ = [
    "aspirin_myocardial_infarction",
    "berkeley_admissions",
    "congenial_sex_by_age",
    "data_path",
    "fisher_tea_tasting",
    "list_datasets",
    "load_csv",
    "massachusetts_1940_ownership",
]


def _data_dir():
    packaged = resources.files("invariantdp") / "_data"
    if packaged.is_dir():
        return packaged
    # an editable install or a source checkout: the repository's data/ folder
    source = Path(__file__).resolve().parents[2] / "data"
    if source.is_dir():
        return source
    raise FileNotFoundError("the bundled data folder of invariantdp is missing from this install.")


def list_datasets() -> list[str]:
    """Names of the bundled CSV files (without the extension).

    Returns
    -------
    list of str
        Sorted names, each accepted by :func:`data_path` and :func:`load_csv`.

    References
    ----------
    The source of each file is stated in the repository's ``data/README.md``.

    Examples
    --------
    >>> "fisher_tea_tasting" in list_datasets()
    True
    """
    return sorted(p.name[:-4] for p in _data_dir().iterdir() if p.name.endswith(".csv"))


def data_path(name: str):
    """Path (a ``Traversable``) of the bundled file ``name`` (``.csv`` optional).

    Parameters
    ----------
    name : str
        One of :func:`list_datasets`, with or without the ``.csv`` extension.

    Returns
    -------
    importlib.resources.abc.Traversable
        The file inside the installed package (or the source checkout's
        ``data/`` folder); open it with ``.open()``.

    Raises
    ------
    InvariantDPError
        If ``name`` is not a bundled data set.

    References
    ----------
    The source of each file is stated in the repository's ``data/README.md``.

    Examples
    --------
    >>> data_path("fisher_tea_tasting").name
    'fisher_tea_tasting.csv'
    """
    names = list_datasets()
    stem = name[:-4] if name.endswith(".csv") else name
    if stem not in names:
        raise InvariantDPError(f"`name` ({name!r}) is not a bundled data set; choose from {names}.")
    return _data_dir() / f"{stem}.csv"


def load_csv(name: str, **kwargs) -> pd.DataFrame:
    """Read a bundled CSV file into a DataFrame (``kwargs`` go to ``read_csv``).

    Parameters
    ----------
    name : str
        One of :func:`list_datasets`, with or without the ``.csv`` extension.
    **kwargs
        Passed to :func:`pandas.read_csv` (e.g. ``index_col``).

    Returns
    -------
    pandas.DataFrame

    References
    ----------
    The source of each file is stated in the repository's ``data/README.md``.

    Examples
    --------
    >>> load_csv("fisher_tea_tasting", index_col="poured_first").shape
    (2, 2)
    """
    with data_path(name).open("r", encoding="utf-8") as fh:
        return pd.read_csv(fh, **kwargs)


def aspirin_myocardial_infarction() -> pd.DataFrame:
    """The Physicians' Health Study 2 x 2 table of aspirin and heart attack.

    Rows are the treatment groups ``placebo`` and ``aspirin``; columns are
    ``myocardial_infarction`` and ``no_myocardial_infarction``.  The odds
    ratio ``(x11 x22) / (x12 x21)`` is that of a heart attack on placebo
    relative to aspirin (about 1.83).

    Returns
    -------
    pandas.DataFrame
        The 2 x 2 table of counts, indexed by ``group``.

    References
    ----------
    Physicians' Health Study Research Group (1989), NEJM 321:129-135 (the
    source); Agresti, *Categorical Data Analysis*, Table 2.3.

    Examples
    --------
    >>> from invariantdp import datasets
    >>> datasets.aspirin_myocardial_infarction().to_numpy().tolist()
    [[189, 10845], [104, 10933]]
    """
    return load_csv("physicians_health_aspirin", index_col="group")


def berkeley_admissions() -> pd.DataFrame:
    """Graduate admissions at Berkeley, fall 1973, by sex: the six largest departments.

    Rows ``men`` and ``women`` (axis ``sex``); columns ``admitted`` and
    ``rejected`` (axis ``admission``).  The odds ratio ``(x11 x22) / (x12
    x21)`` is the odds of admission of men relative to women (about 1.84),
    the aggregate that Simpson's paradox reverses department by department.

    Returns
    -------
    pandas.DataFrame
        The 2 x 2 table of counts (4,526 applicants).

    References
    ----------
    Bickel, P. J., Hammel, E. A. and O'Connell, J. W. (1975), "Sex bias in
    graduate admissions: data from Berkeley", *Science* 187(4175):398-404
    (the source); the totals over departments A-F of R's ``UCBAdmissions``.

    Examples
    --------
    >>> from invariantdp import datasets
    >>> t = datasets.berkeley_admissions()
    >>> t.to_numpy().tolist(), t.index.name, t.columns.name
    ([[1198, 1493], [557, 1278]], 'sex', 'admission')
    """
    df = load_csv("berkeley_admissions", index_col="sex")
    df.columns.name = "admission"
    return df


def fisher_tea_tasting() -> pd.DataFrame:
    """Fisher's tea-tasting experiment (rows: poured first; columns: guess).

    Returns
    -------
    pandas.DataFrame
        The 2 x 2 table of counts, indexed by ``poured_first`` (``milk``,
        ``tea``), with columns ``guessed_milk`` and ``guessed_tea``.

    References
    ----------
    Fisher, R. A. (1935), *The Design of Experiments*, Sec. 2 (the source).

    Examples
    --------
    >>> fisher_tea_tasting().to_numpy().tolist()
    [[3, 1], [1, 3]]
    """
    return load_csv("fisher_tea_tasting", index_col="poured_first")


def massachusetts_1940_ownership(*, swapped: bool = False) -> pd.DataFrame:
    """Dwellings by county and ownership, Massachusetts, 1940 Census (full count).

    Table 5.1 of Bailie, Gong & Meng: rows are the 14 counties, columns
    ``owned`` and ``rented`` (with ``total``).  ``swapped=True`` returns the
    right half of the table instead: one run of the Permutation Algorithm
    (Algorithm 5.1) at swap rate 50% with the county swapped and household
    size x state matched.  County totals (1,144,424 dwellings) and the state
    totals of owned (435,805) and rented (708,619) dwellings are invariant.

    Parameters
    ----------
    swapped : bool, optional
        Return the swapped table (right half of Table 5.1) instead of the
        confidential one.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``county``, with columns ``owned``, ``rented``, ``total``.

    References
    ----------
    Bailie, Gong & Meng, "Can swapping be differentially private?",
    Table 5.1, tabulated from the IPUMS USA full-count 1940 Census
    (Ruggles et al., 2021).

    Examples
    --------
    >>> from invariantdp import datasets
    >>> t = datasets.massachusetts_1940_ownership()
    >>> t.loc["Suffolk"].tolist(), t.sum().tolist()
    ([49656, 176553, 226209], [435805, 708619, 1144424])
    """
    df = load_csv("massachusetts_1940_ownership", index_col="county")
    cols = ["owned", "rented", "total"]
    if swapped:
        return df[[f"{c}_swapped" for c in cols]].set_axis(cols, axis=1)
    return df[cols]


def congenial_sex_by_age(table: str = "confidential") -> pd.DataFrame:
    """The 2 x 23 sex-by-age table of Gong & Meng (2020), Section 3, Table 1.

    Rows ``female`` and ``male``; 23 age groups (the paper's labels, after
    Census tables P12 / P7).  ``table="confidential"`` is the simulated
    confidential table (top of Table 1; totals 130 female, 126 male, 43 under
    18); ``table="privatized"`` the congenial release printed beneath it, which
    keeps those three invariants.

    Parameters
    ----------
    table : {"confidential", "privatized"}, optional

    Returns
    -------
    pandas.DataFrame
        2 x 23 counts, rows ``female`` and ``male``, one column per age group.

    References
    ----------
    Gong & Meng (2020), "Congenial differential privacy under mandated
    disclosure", Section 3, Table 1.

    Examples
    --------
    >>> from invariantdp import datasets
    >>> t = datasets.congenial_sex_by_age()
    >>> t.shape, int(t.to_numpy().sum())
    ((2, 23), 256)
    """
    if table not in ("confidential", "privatized"):
        raise InvariantDPError(f"`table` ({table!r}) must be 'confidential' or 'privatized'.")
    df = load_csv("congenial_sex_by_age")
    out = df[df["table"] == table].drop(columns="table").set_index("sex")
    out.columns.name = "age"
    return out
