r"""Sampling a model of :mod:`._model_builders`: :func:`fit`.

NUTS for the continuous parameters, :class:`~._latent_samplers.LatticeMetropolis`
for exact integer latent counts and, when the model is the builder's own,
the conjugate Dirichlet draw (:class:`~._latent_samplers.DirichletGibbs`); the
release travels with the result as JSON.
"""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pymc as pm
import xarray as xr

from ..._rng import as_generator
from ..._validation import InvariantDPError, check_positive_int
from ...release import Release
from ._latent import _signature
from ._latent_samplers import DirichletGibbs, LatticeMetropolis

__all__ = ["fit"]


def fit(
    model,
    *,
    draws=1000,
    tune=1000,
    chains=4,
    rng=None,
    cores=1,
    target_accept=0.9,
    n_proposals=None,
    fast=True,
    conjugate=True,
    progressbar=False,
    nuts_sampler="pymc",
    **kwargs,
):
    r"""Sample a model built by :mod:`._model_builders`; return ArviZ ``InferenceData``.

    Parameters
    ----------
    model : pymc.Model
        From :func:`contingency_table_model`, :func:`poisson_regression_model`
        or :func:`binomial_model` (possibly modified).
    draws, tune, chains : int, optional
        Retained draws and tuning iterations per chain, number of chains.
    rng : None, int, SeedSequence or numpy.random.Generator
        Seeds every chain (and the lattice step) reproducibly: one integer
        drawn from it is PyMC's ``random_seed``, from which PyMC spawns a
        stream per chain.  The same ``rng`` gives the same draws.
    cores : int, optional
        Parallel chains (default 1).
    target_accept : float, optional
        NUTS target acceptance.
    n_proposals : int, optional
        Lattice proposals per iteration (default: ten times the number of
        cells with ``fast``, else the number of cells).
    fast : bool, optional
        Let the lattice step use the separable form of the builder's model
        (see :class:`~._latent_samplers.LatticeMetropolis`, ``unary``).  Set it to
        False after adding model terms that couple the latent counts.
    conjugate : bool, optional
        For :func:`contingency_table_model` with exact latent counts, update
        ``cell_probs`` by its conjugate Dirichlet draw
        (:class:`~._latent_samplers.DirichletGibbs`) instead of NUTS.  Used only while
        the model's free variables and potentials are those the builder made
        (a changed prior is detected by a new variable, not by a changed
        concentration: set ``conjugate=False`` after editing the prior in place).
    progressbar : bool, optional
    nuts_sampler : {"pymc", "nutpie", "numpyro", "blackjax"}, optional
        The NUTS implementation, passed to :func:`pymc.sample`.  The external
        ones (installed separately, e.g. ``pip install nutpie``) compile the
        model and are often several times faster, but they run NUTS alone: a
        model with exact latent counts (``latent="exact"``) needs the lattice
        step and is refused; build it with ``latent="relaxed"`` (or
        ``"marginal"``) to use them.
    **kwargs
        Passed to :func:`pymc.sample` (except ``random_seed``: use ``rng``).

    Returns
    -------
    arviz.InferenceData
        With ``constant_data`` holding the released value (``release_value``)
        and the invariant values (``invariant_values``), and the release as
        JSON in ``posterior.attrs["release"]`` and ``constant_data.attrs``.

    Notes
    -----
    With ``latent="exact"`` the counts are updated by
    :class:`~._latent_samplers.LatticeMetropolis` and every other free variable by
    NUTS in one compound step; the lattice step's acceptance rate is in
    ``sample_stats.lattice_accept``.

    References
    ----------
    Ju, Awan, Gong & Rao (2022), "Data augmentation MCMC for Bayesian
    inference from privatized data", NeurIPS 35.

    Examples
    --------
    >>> idata = fit(model, draws=1000, tune=1000, chains=4, rng=0)  # doctest: +SKIP
    >>> idata.posterior["cell_probs"].mean(("chain", "draw"))  # doctest: +SKIP
    """
    if not isinstance(model, pm.Model):
        raise TypeError(f"`model` must be a pymc.Model, got {type(model).__name__}.")
    info = getattr(model, "invariantdp", None)
    if info is None:
        raise InvariantDPError(
            "`model` was not built by invariantdp.inference.bayes (no `invariantdp` attribute)."
        )
    if "random_seed" in kwargs:
        shown = repr(kwargs["random_seed"])
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise TypeError(
            f"`random_seed` ({shown}) is not an argument of fit: "
            "seed it with `rng` (None, an int, a SeedSequence or a Generator)."
        )
    if nuts_sampler not in _NUTS_SAMPLERS:
        raise InvariantDPError(
            f"`nuts_sampler` ({nuts_sampler!r}) must be one of {', '.join(_NUTS_SAMPLERS)}."
        )
    if nuts_sampler != "pymc":
        if info["latent"] == "exact":
            raise InvariantDPError(
                f"`nuts_sampler={nuts_sampler!r}` runs NUTS alone, but the model has exact "
                "latent counts that need the lattice step; build it with latent='relaxed' "
                "(or 'marginal'), or use nuts_sampler='pymc'."
            )
        if importlib.util.find_spec(nuts_sampler) is None:
            raise InvariantDPError(
                f"`nuts_sampler={nuts_sampler!r}` needs the package "
                f"{nuts_sampler!r}: pip install {nuts_sampler}."
            )
        kwargs["nuts_sampler"] = nuts_sampler
    draws = check_positive_int("draws", draws)
    tune = check_positive_int("tune", tune, minimum=0)
    chains = check_positive_int("chains", chains)
    # One integer seed: PyMC spawns the per-chain streams from it (a list of seeds
    # no longer seeds chain by chain in recent PyMC and draws a UserWarning); an int
    # drawn from `rng` keeps the fit reproducible from `rng` in every PyMC 5.x.
    seed = int(as_generator(rng).integers(0, 2**31 - 1))
    steps = []
    conj = info.get("conjugate")
    if (
        conjugate
        and conj is not None
        and info["latent"] == "exact"
        and _signature(model) == conj["signature"]
    ):
        steps.append(
            DirichletGibbs(
                [model[conj["var"]]], counts=info["latent_var"], alpha=conj["alpha"], model=model
            )
        )
    if info["latent"] == "exact":
        steps.append(
            LatticeMetropolis(
                [model[info["latent_var"]]],
                moves=info["moves"],
                unary=info["unary"] if fast else None,
                lower=info["lower"],
                upper=info["upper"],
                n_proposals=n_proposals,
                max_step=info["max_step"],
                model=model,
            )
        )
    covered = {v.name for st in steps for v in st.vars}
    if any(model.rvs_to_values[v].name not in covered for v in model.free_RVs):
        kwargs.setdefault("target_accept", target_accept)
    with model, warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"(pymc|pytensor|numpy)")
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            step=steps or None,
            random_seed=seed,
            progressbar=progressbar,
            **kwargs,
        )
    _attach_release(idata, info["release"])
    return idata


#: the NUTS implementations pymc.sample accepts, and the package each needs
#: the nuts_sampler names PyMC accepts; each is also the module it needs
_NUTS_SAMPLERS = ("pymc", "nutpie", "numpyro", "blackjax")


def _attach_release(idata, release: Release) -> None:
    text = release.to_json()
    value = np.asarray(release.value)
    data = {
        "release_value": xr.DataArray(value, dims=[f"release_dim_{i}" for i in range(value.ndim)])
    }
    if release.invariants is not None and release.invariants.values is not None:
        data["invariant_values"] = xr.DataArray(
            np.asarray(release.invariants.values), dims=["invariant"]
        )
    ds = xr.Dataset(data, attrs={"release": text})
    if "constant_data" in idata.groups():
        idata.constant_data = idata.constant_data.assign(data)
        idata.constant_data.attrs["release"] = text
    else:
        idata.add_groups(constant_data=ds)
    idata.posterior.attrs["release"] = text
