"""An independent generator of files in the layout of the Bureau's 2020 P.L. 94-171 NMF.

Built with pyarrow directly from the published facts (never through the
package's writer), so that ``read_nmf`` is tested on files it did not make:

* two product folders, ``US_Person_PL_PROD`` and ``US_Unit_PL_PROD``, each with
  ``<Level>.parquet/{DPQuery,Constraint}``; below US, Hive partitions
  ``State=<3-digit spine geocode>``; Spark's ``_SUCCESS`` markers;
* the optimized spine: US ``""``, State 3 characters (AIAN flag + FIPS), County
  9, Tract and Block_Group of widths the public sources do not fix (here 13
  and 15), Block = its block group's geocode + the 16-digit tabulation code;
* DPQuery columns ``geocode, query_name, value (int64 list), variance,
  query_shape (4 ints, 1 for a summed axis), plb`` and one string column per
  attribute (``*``, the attribute, a recode's name, ``detailed``); Constraint
  the same with ``sign``;
* persons: the production strategy's 11 queries per level (10 at US, no
  total), 1/sigma^2 = rho x level share x query share
  (``strategies.py``: ``ProductionCandidate20210527US_mult8_add02_dsepJune3``;
  ``person_US.ini``: global scale 339/542, level shares 104:1440:447:687:1256:165
  over 4099); ``variance`` the discrete Gaussian's variance by direct summation
  (``primitives.computeDiscreteGaussianVariance``);
* persons constraints: ``hhgq_total_lb`` (>=, facilities of each GQ type, 0
  for households), ``hhgq_total_ub`` (<=, 99999 x facilities, housing units
  for households) and ``nurse_nva_0`` (= 0 on gqNursingTotal x nonvoting) at
  every level from State down (nurse_nva_0 from County down), summed upward;
  ``total`` (=) at US; units: ``total`` (=, housing units) at every level;
* a block group with one block is bypassed: the block has no DPQuery rows
  (it appears in Constraint only) and the block group takes its budget.

The noise is numpy's rounded Gaussian, not the exact discrete Gaussian: these
files test reading and accounting, not the noise law.
"""

from __future__ import annotations

import itertools
from fractions import Fraction as Fr

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

LEVELS = ("US", "State", "County", "Tract", "Block_Group", "Block")
PERSON_ATTRS = ("hhgq", "votingage", "hispanic", "cenrace")
PERSON_SHAPE = (8, 2, 2, 63)
RHO_PERSONS = Fr(542, 339) ** 2
LEVEL_SHARE = dict(
    zip(LEVELS, (Fr(n, 4099) for n in (104, 1440, 447, 687, 1256, 165)), strict=True)
)
QUERIES = (
    "total",
    "cenrace",
    "hispanic",
    "votingage",
    "hhinstlevels",
    "hhgq",
    "hispanic * cenrace",
    "votingage * cenrace",
    "votingage * hispanic",
    "votingage * hispanic * cenrace",
    "detailed",
)
QUERY_SHARE = {
    "US": (
        None,
        *(Fr(n, 4097) for n in (52, 26, 26, 26, 26, 130, 130, 26)),
        Fr(26, 241),
        Fr(189, 241),
    ),
    "State": (
        *(Fr(n, 4097) for n in (3773, 6, 6, 6, 6, 6, 12, 12, 6)),
        Fr(2, 241),
        Fr(230, 4097),
    ),
    "County": tuple(Fr(n, 4097) for n in (3126, 10, 10, 10, 10, 10, 28, 28, 10, 101, 754)),
    "Tract": (
        Fr(1567, 4102),
        Fr(4, 2051),
        *(Fr(5, 4102),) * 4,
        Fr(1933, 4102),
        Fr(10, 2051),
        Fr(5, 4102),
        Fr(67, 4102),
        Fr(241, 2051),
    ),
    "Block_Group": tuple(Fr(n, 4099) for n in (1705, 3, 3, 3, 3, 3, 1055, 9, 3, 24, 1288)),
    "Block": tuple(Fr(n, 4097) for n in (5, 9, 5, 5, 5, 5, 21, 21, 5, 71, 3945)),
}
RHO_UNITS = Fr(11417641, 152349649)
#: hhinstlevels: households, institutional (1-4), non-institutional (5-7)
HHINST = ((0,), (1, 2, 3, 4), (5, 6, 7))
WIDTH = {"US": 0, "State": 3, "County": 9, "Tract": 13, "Block_Group": 15, "Block": 31}


def dg_variance(sigma_sq: float) -> float:
    """The discrete Gaussian's variance, by direct summation over 50 standard deviations."""
    if sigma_sq > 100:
        return float(sigma_sq)
    n = np.arange(-np.floor(50 * np.sqrt(sigma_sq)), 0)
    p = np.exp(-n * n / (2 * sigma_sq))
    return float(2 * np.sum(n * n * p) / (2 * np.sum(p) + 1))


def spine(states=("044",), counties=2, tracts=2, groups=2, blocks=3, single_block_group=True):
    """Geocodes per level (sorted); one block group of one block if ``single_block_group``."""
    units = {"US": [""], "State": list(states)}
    for level, parent, n, digits in (
        ("County", "State", counties, 6),
        ("Tract", "County", tracts, 4),
        ("Block_Group", "Tract", groups, 2),
    ):
        units[level] = [p + str(i + 1).zfill(digits) for p in units[parent] for i in range(n)]
    units["Block"] = []
    for j, bg in enumerate(units["Block_Group"]):
        count = 1 if (single_block_group and j == 0) else blocks
        fips = bg[1:3]  # the tabulation code: state FIPS, county, tract, block (unique)
        units["Block"] += [
            bg + fips + "001" + str(j).zfill(6) + "1" + str(1000 + b) for b in range(count)
        ]
    return units


def facilities(rng, blocks: list) -> np.ndarray:
    """Per block: housing units and facilities of the 7 GQ types (most blocks have none)."""
    out = np.zeros((len(blocks), 8), dtype=np.int64)
    out[:, 0] = rng.integers(0, 12, len(blocks))
    gq = rng.random((len(blocks), 7)) < 0.25
    out[:, 1:] = gq * rng.integers(1, 3, (len(blocks), 7))
    out[0, 0] = 0  # a block without housing: its household slice is a structural zero
    out[1, 3] = 1  # nursing facilities somewhere
    return out


def person_histograms(rng, blocks: list, fac: np.ndarray) -> np.ndarray:
    """Detailed person histograms that satisfy the constraints (no minors in nursing)."""
    hist = np.zeros((len(blocks), *PERSON_SHAPE), dtype=np.int64)
    for i in range(len(blocks)):
        for g in range(8):
            if fac[i, g] == 0:
                continue
            people = rng.integers(fac[i, g], 3 * fac[i, g] + 4)
            va = rng.integers(0, 2, people)
            if g == 3:
                va[:] = 1
            cells = zip(va, rng.integers(0, 2, people), rng.integers(0, 63, people), strict=True)
            for v, h, c in cells:
                hist[i, g, v, h, c] += 1
    return hist


def query_answer(hist: np.ndarray, query: str) -> tuple[np.ndarray, list, dict]:
    """``(answers per unit, query_shape, attribute columns)`` of a query, by explicit sums."""
    n = hist.shape[0]
    if query == "detailed":
        return hist.reshape(n, -1), list(PERSON_SHAPE), dict.fromkeys(PERSON_ATTRS, "detailed")
    parts = [] if query == "total" else query.split(" * ")
    cols = {a: "*" for a in PERSON_ATTRS}
    arr = hist
    shape = [1, 1, 1, 1]
    for axis in range(3, -1, -1):
        name = PERSON_ATTRS[axis]
        if name in parts:
            cols[name] = name
            shape[axis] = PERSON_SHAPE[axis]
        elif axis == 0 and "hhinstlevels" in parts:
            arr = np.stack([arr[:, list(g)].sum(axis=1) for g in HHINST], axis=1)
            cols["hhgq"] = "hhinstlevels"
            shape[0] = 3
        else:
            arr = arr.sum(axis=axis + 1, keepdims=True)
    return arr.reshape(n, -1), shape, cols


def _table(rows: list, kind: str, attrs) -> pa.Table:
    cols = {
        "geocode": pa.array([r["geocode"] for r in rows], pa.string()),
        "query_name": pa.array([r["query_name"] for r in rows], pa.string()),
        "value": pa.array([[int(v) for v in r["value"]] for r in rows], pa.list_(pa.int64())),
    }
    if kind == "DPQuery":
        cols["variance"] = pa.array([r["variance"] for r in rows], pa.float64())
        cols["plb"] = pa.array([r["plb"] for r in rows], pa.string())
    else:
        cols["sign"] = pa.array([r["sign"] for r in rows], pa.string())
    cols["query_shape"] = pa.array([r["query_shape"] for r in rows], pa.list_(pa.int64()))
    for a in attrs:
        cols[a] = pa.array([r[a] for r in rows], pa.string())
    return pa.table(cols)


def _write(product_dir, level: str, kind: str, rows: list, attrs, state_width=3, group=None):
    base = product_dir / f"{level}.parquet" / kind
    if level == "US":
        groups = {None: rows}
    else:
        groups = {}
        for r in rows:
            groups.setdefault(r["geocode"][:state_width], []).append(r)
    for state, part in sorted(groups.items(), key=lambda kv: str(kv[0])):
        folder = base if state is None else base / f"State={state}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "part-00000-c000.snappy.parquet"
        pq.write_table(_table(part, kind, attrs), path, row_group_size=group)
        (folder / "_SUCCESS").write_text("")
    base.mkdir(parents=True, exist_ok=True)


def _aggregate(units: dict, per_block: np.ndarray) -> dict:
    """Sums over the spine from block rows (blocks sorted as in ``units``)."""
    out = {"Block": per_block}
    for child, parent in zip(LEVELS[:0:-1], LEVELS[-2::-1], strict=True):
        idx = np.searchsorted(units[parent], [g[: WIDTH[parent]] for g in units[child]])
        total = np.zeros((len(units[parent]), *out[child].shape[1:]), dtype=out[child].dtype)
        np.add.at(total, idx, out[child])
        out[parent] = total
    return out


def bypassed(units: dict) -> set:
    """Blocks that are their block group's only block (measured with their parent)."""
    counts = {}
    for b in units["Block"]:
        counts[b[: WIDTH["Block_Group"]]] = counts.get(b[: WIDTH["Block_Group"]], 0) + 1
    return {b for b in units["Block"] if counts[b[: WIDTH["Block_Group"]]] == 1}


def write_release(root, rng, states=("044",), row_group_size=None, **shape) -> dict:
    """Both products under ``root``; returns the truth: units, histograms, facilities, sigma^2.

    ``shape`` (``counties``, ``tracts``, ``groups``, ``blocks``) sizes the spine;
    ``row_group_size`` the Parquet row groups (default: pyarrow's, one per file here).
    """
    units = spine(states, **shape)
    fac = facilities(rng, units["Block"])
    hist = person_histograms(rng, units["Block"], fac)
    hists = _aggregate(units, hist)
    facs = _aggregate(units, fac)
    skip = bypassed(units)
    parents_of_skip = {b[: WIDTH["Block_Group"]] for b in skip}
    persons = root / "US_Person_PL_PROD"
    sigma = {}
    for level in LEVELS:
        rows = []
        for qi, query in enumerate(QUERIES):
            share = QUERY_SHARE[level][qi]
            if share is None:
                continue
            answers, shape, cols = query_answer(hists[level], query)
            for u, code in enumerate(units[level]):
                if level == "Block" and code in skip:
                    continue
                rho = RHO_PERSONS * LEVEL_SHARE[level] * share
                if level == "Block_Group" and code in parents_of_skip:
                    rho += RHO_PERSONS * LEVEL_SHARE["Block"] * QUERY_SHARE["Block"][qi]
                sigma_sq = 1 / rho
                sigma[(level, query, code)] = sigma_sq
                noise = np.rint(rng.normal(0, float(sigma_sq) ** 0.5, answers.shape[1]))
                rows.append(
                    {
                        "geocode": code,
                        "query_name": f"{query}_dpq",
                        "value": answers[u] + noise.astype(np.int64),
                        "variance": dg_variance(float(sigma_sq)),
                        "plb": str(rho),
                        "query_shape": shape,
                        **cols,
                    }
                )
        _write(persons, level, "DPQuery", rows, PERSON_ATTRS, group=row_group_size)
        con = []
        for u, code in enumerate(units[level]):
            star = dict.fromkeys(PERSON_ATTRS, "*")
            if level == "US":
                con.append(
                    {
                        "geocode": code,
                        "query_name": "total_con",
                        "sign": "=",
                        "value": [int(hists[level][u].sum())],
                        "query_shape": [1, 1, 1, 1],
                        **star,
                    }
                )
                continue
            f = facs[level][u]
            lb = np.concatenate([[0], f[1:]])
            hhgq = {**star, "hhgq": "hhgq"}
            con.append(
                {
                    "geocode": code,
                    "query_name": "hhgq_total_lb_con",
                    "sign": ">=",
                    "value": lb,
                    "query_shape": [8, 1, 1, 1],
                    **hhgq,
                }
            )
            con.append(
                {
                    "geocode": code,
                    "query_name": "hhgq_total_ub_con",
                    "sign": "<=",
                    "value": 99999 * f,
                    "query_shape": [8, 1, 1, 1],
                    **hhgq,
                }
            )
            if level != "State":
                nurse = {**star, "hhgq": "gqNursingTotal", "votingage": "nonvoting"}
                con.append(
                    {
                        "geocode": code,
                        "query_name": "nurse_nva_0_con",
                        "sign": "=",
                        "value": [0],
                        "query_shape": [1, 1, 1, 1],
                        **nurse,
                    }
                )
        _write(persons, level, "Constraint", con, PERSON_ATTRS, group=row_group_size)
    units_dir = root / "US_Unit_PL_PROD"
    h1 = np.stack([fac[:, 0] - rng.binomial(fac[:, 0], 0.8), rng.binomial(0, 0.5, len(fac))], 1)
    h1[:, 1] = fac[:, 0] - h1[:, 0]  # occupied = housing units - vacant
    h1s = _aggregate(units, h1)
    for level in LEVELS:
        rows, con = [], []
        rho = RHO_UNITS * LEVEL_SHARE[level]
        for u, code in enumerate(units[level]):
            con.append(
                {
                    "geocode": code,
                    "query_name": "total_con",
                    "sign": "=",
                    "value": [int(h1s[level][u].sum())],
                    "query_shape": [1],
                    "h1": "*",
                }
            )
            if level == "Block" and code in skip:
                continue
            r = rho + (RHO_UNITS * LEVEL_SHARE["Block"] if code in parents_of_skip else 0)
            noise = np.rint(rng.normal(0, float(1 / r) ** 0.5, 2)).astype(np.int64)
            sigma[("units", level, code)] = 1 / r
            rows.append(
                {
                    "geocode": code,
                    "query_name": "detailed_dpq",
                    "value": h1s[level][u] + noise,
                    "variance": dg_variance(float(1 / r)),
                    "plb": str(r),
                    "query_shape": [2],
                    "h1": "h1",
                }
            )
        _write(units_dir, level, "DPQuery", rows, ("h1",), group=row_group_size)
        _write(units_dir, level, "Constraint", con, ("h1",), group=row_group_size)
    return {
        "units": units,
        "hists": hists,
        "facilities": facs,
        "sigma_sq": sigma,
        "skip": skip,
        "h1": h1s,
    }


CENRACE = [
    "-".join(c)
    for k in range(1, 7)
    for c in itertools.combinations(("white", "black", "aian", "asian", "nhopi", "sor"), k)
]
