"""The abstract mechanism: a non-private target plus a randomisation calibrated to its sensitivity (R: ``DPMech``).

The base class owns the release template (validate, charge, evaluate the target, randomise, report the guarantee),
so a subclass supplies only its math: how to read the target's output (``_evaluate``), the norm in which the
sensitivity is measured (``_norm``) and the randomisation (``_release``); and, when it knows them, what a release
costs (``privacy_events``) and its error bar (``half_width``), which the accountant, ``Response.accuracy`` and the
auditor read from the mechanism.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, SupportsFloat, SupportsIndex

import attrs
import numpy as np

from .._blockwise import declared_rows
from .._rng import RNGLike, as_generator
from .._validation import check_in_range, check_int, check_size, refuse_masked
from ..events import ApproxDPEvent, Event, Relation, guarantee_event
from ..exceptions import SensitivityError, TargetOutputError
from ..privacy import Del, Eps
from .response import Response
from .sampling import SensitivitySampling, pending_sampling

if TYPE_CHECKING:
    from scipy.stats import rv_continuous

__all__ = ["DPMech", "NumericMech", "charged_note", "check_accountant", "constant_zero", "grid_output_rounding"]


def as_sensitivity(value: SupportsFloat) -> float:
    return check_in_range(
        value,
        "sensitivity",
        0.0,
        math.inf,
        low_closed=True,
        high_closed=True,
        allow_inf=True,
        owner="the mechanism",
        fix="Pass the sensitivity of your target, or leave it unset and call sensitivity_sampler().",
    )


def as_gamma_sensitivity(value: SupportsFloat | None) -> float | None:
    if value is None:
        return None
    return check_in_range(
        value, "gamma_sensitivity", 0.0, 1.0, low_closed=False, high_closed=False, owner="the mechanism"
    )


def _sampled_n(value: SupportsIndex | None) -> int | None:
    return None if value is None else check_int(value, "sampled_n", minimum=1, owner="the mechanism")


def _sampled_fields_from_sampler(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    """On a mechanism whose sensitivity is derived, ``gamma_sensitivity`` and ``sampled_n`` come from the sampler."""
    if not instance.sensitivity_is_derived or (value is not None and value.describes(instance)):
        return
    hand = [f"{name}={getattr(instance, name)!r}" for name in ("gamma_sensitivity", "sampled_n")]
    if value is None and instance.gamma_sensitivity is None and instance.sampled_n is None:
        return
    raise ValueError(
        f"{type(instance).__name__} derives its sensitivity from its public settings, so gamma_sensitivity and "
        f"sampled_n can only be set by its sensitivity_sampler, which records the sampling; got {', '.join(hand)} "
        "without that record (set by hand, or kept by attrs.evolve after a setting changed). They would relabel "
        "the release as random DP without making it private. Leave them unset, or call "
        "est.sensitivity_sampler(oracle, n=...) on the final settings (where the estimator allows sampling)."
    )


def _unknown_size_fix(X: Any) -> str:
    """How to declare the number of records of a dataset whose size is not public metadata."""
    kind = type(X[0] if isinstance(X, tuple) and X else X)
    if kind.__module__.split(".")[0] in ("dask", "dask_expr"):
        if hasattr(X[0] if isinstance(X, tuple) else X, "to_dask_array"):
            return (
                "A dask DataFrame does not know its number of rows: pass X.to_dask_array(lengths=True) (a dask "
                "array whose chunk sizes are known) or, if it fits in memory, X.compute()."
            )
        return "A dask array with unknown chunk sizes: declare them with X = X.compute_chunk_sizes()."
    return (
        "Pass a numpy array, a list of records, a pandas object, a dask array with known chunk sizes, or "
        "dp.Chunks(source, n_records=n), which declares its number of records (a generator has no size)."
    )


def check_accountant(accountant: Any) -> Any:
    """Refuse an ``accountant=`` that is not an accountant (e.g. a list of them) before anything is charged."""
    if accountant is None or callable(getattr(accountant, "spend", None)):
        return accountant
    raise TypeError(
        "The 'accountant' argument must be a diffpriv_py.Accountant (or None). Got "
        f"{accountant!r} (type {type(accountant).__name__}). Pass accountant=acc with acc = dp.Accountant(budget=...)."
    )


def charged_note(exc: BaseException, guarantee: Eps) -> None:
    """Say on an error raised after the charge that the budget was spent, and why (the failure may reveal data)."""
    note = (
        f"The accountant was charged {guarantee!r} for this release: the failure happened after the charge, "
        "while reading the private data, and whether it happens can depend on the data, so the charge stands."
    )
    add_note = getattr(exc, "add_note", None)  # BaseException.add_note is Python >= 3.11
    if add_note is not None:
        add_note(note)


def constant_zero(X: Any) -> float:
    """R's default target (``.constant_target``): 0 whatever the dataset, so an unconfigured mechanism is harmless."""
    return 0.0


def check_callable_target(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not callable(value):
        raise TypeError(
            f"The 'target' of {type(instance).__name__} must be a function mapping a dataset to the non-private "
            f"answer. Got {value!r} (type {type(value).__name__})."
        )


@attrs.frozen(kw_only=True)
class DPMech(abc.ABC):
    """Abstract differentially private mechanism (R: ``DPMech``).

    Subclassing contract. A mechanism is one class, written in one file:

    * must define ``_evaluate`` (check and convert the target's output), ``_norm`` (the distance the sensitivity is
      measured in) and ``_release`` (the randomisation of one evaluated output);
    * may define :meth:`privacy_events` (what a release costs, for the accountant; default: the claimed (ε, δ)),
      :meth:`half_width` (its error bar, for :meth:`Response.accuracy <diffpriv_py.Response.accuracy>`; default:
      none), :attr:`accuracy_units`, :meth:`privacy_curve` (a claimed δ(ε′) curve the auditor checks), the public
      checks ``_check_params``, ``_check_dataset``, ``_check_release``, ``_check_samplable``, ``_assumptions``, and
      ``_sample_many`` (vectorised draws for the auditor);
    * never overrides :meth:`release_response`: the base runs the public checks, the charge and the private work in
      that order.

    The accountant, ``Response.accuracy``/``confidence_interval`` and ``dp.testing.audit`` call only these methods,
    so a new mechanism works with all three without editing them; ``dp.testing.parametrize_with_checks`` checks that
    its events are accounting events and its error bar is consistent.

    Parameters
    ----------
    target : callable, default constant_zero
        Maps a dataset to the non-private answer. Its form depends on the mechanism (a number or array for
        additive noise, a score function for the exponential mechanism, a function on [0, 1]^d for Bernstein).
        The default returns 0 for every dataset, as R's default target does.
    sensitivity : float, default inf
        The global sensitivity of ``target`` in the mechanism's norm under the replace-one neighbouring
        relation (datasets of equal size differing in one record). ``inf`` means *unset*: a release is refused
        until it is set or estimated with :meth:`sensitivity_sampler`.
    gamma_sensitivity : float or None, default None
        Set by :meth:`sensitivity_sampler`: the γ of the random-DP guarantee that a sampled sensitivity gives.
        ``None`` means the sensitivity is a true global bound.
    sampled_n : int or None, default None
        Set by the sensitivity sampler: the number of records the sensitivity was sampled for. A release on a
        dataset of another size, or of a size that is not public metadata (a generator, a dask collection of
        unknown length, :class:`~diffpriv_py.Chunks` without ``n_records``), is refused before any budget is
        charged.

    Attributes
    ----------
    sampling : SensitivitySampling or None
        Set only by the sensitivity sampler, never by a constructor argument: how the sensitivity was sampled
        (``n``, ``m``, ``k``, ``gamma``). :func:`attrs.evolve` does not carry it over, so a changed copy of a sampled
        mechanism has none. On a mechanism whose sensitivity the library derives (:attr:`sensitivity_is_derived`,
        e.g. the estimators) ``gamma_sensitivity`` and ``sampled_n`` are refused without it, and only with it may a
        sampled sensitivity (with its γ) lie below the derived one. On the other mechanisms a hand-set
        ``gamma_sensitivity`` is the user's own declaration, as in R.

    Notes
    -----
    Subclasses supply ``_evaluate`` (check and convert the target's output), ``_norm`` (distance between two
    evaluated outputs, the sensitivity's norm) and ``_release`` (the randomisation). Everything else is
    inherited, including the validation, the random-DP conversion of the guarantee, accounting and the
    sensitivity sampler. Mechanisms are frozen; :func:`attrs.evolve` makes a changed copy.
    """

    target: Callable[[Any], Any] = attrs.field(default=constant_zero, validator=check_callable_target)
    sensitivity: float = attrs.field(default=math.inf, converter=as_sensitivity)
    gamma_sensitivity: float | None = attrs.field(default=None, converter=as_gamma_sensitivity)
    sampled_n: int | None = attrs.field(default=None, converter=_sampled_n)
    sampling: SensitivitySampling | None = attrs.field(
        init=False,
        default=attrs.Factory(pending_sampling, takes_self=True),
        eq=False,
        repr=False,
        validator=_sampled_fields_from_sampler,
    )

    privacy_params_type: ClassVar[type[Eps]] = Eps
    """The privacy-parameter class a release needs (a subclass such as Gam is accepted too)."""

    accuracy_units: ClassVar[str] = "value"
    """The units of :meth:`half_width`: ``"value"`` (those of the release, so ``Response.confidence_interval`` follows)
    or another name (e.g. ``"ranks"`` for quantiles, whose bar bounds the rank error and gives no interval)."""

    sensitivity_is_derived: ClassVar[bool] = False
    """Whether the library derives the sensitivity from public settings (estimators, group-by): then it can be raised,
    never lowered, and ``gamma_sensitivity`` / ``sampled_n`` come only from the sampler (see :attr:`sampling`)."""

    @property
    def relation(self) -> Relation:
        """The neighbouring relation the guarantee is stated for: ``"replace_one"`` (datasets of equal size differing
        in one record or person; every mechanism's default) or ``"add_remove"`` (one record or person added or
        removed; a release that offers it, e.g. :func:`~diffpriv_py.stats.groupby` with ``neighbouring=``). The
        accountant composes in replace-one terms and converts add/remove guarantees
        (:func:`~diffpriv_py.events.guarantee_event`)."""
        return "replace_one"

    # ---- public template -------------------------------------------------------------------------------------

    def release_response(self, privacy_params: Eps, X: Any, *, rng: RNGLike = None, accountant: Any = None) -> Response:
        """Run the mechanism once on dataset ``X`` (R: ``releaseResponse``).

        Parameters
        ----------
        privacy_params : Eps
            The privacy level to release at (an instance of :attr:`privacy_params_type`).
        X : object
            The private dataset, in whatever form ``target`` accepts (rows are records).
        rng : None, int, SeedSequence or Generator, optional
            ``None`` (default) uses cryptographically strong randomness; a seed makes the release reproducible
            and must only be used for testing.
        accountant : Accountant, optional
            Charged with the guarantee *before* any noise is drawn; a release that would overspend raises
            :class:`~diffpriv_py.exceptions.BudgetExceededError` and charges nothing.

        Returns
        -------
        Response
            The private answer and the guarantee actually given (a ``Gam`` if the sensitivity was sampled).

        Raises
        ------
        TypeError
            If ``privacy_params`` is not of the required type.
        SensitivityError
            If the sensitivity is unset or non-finite.
        TargetOutputError
            If the target's output has the wrong type or shape.
        """
        # One release order: everything that depends only on public information is checked first and
        # nothing is charged if it fails; the accountant is charged next; only then is the private data read.
        params = self.check_privacy_params(privacy_params)
        generator = as_generator(rng)
        if accountant is not None:
            accountant = check_accountant(accountant)
        data = self.check_dataset(X)
        self._check_release(params, data)
        guarantee = self.privacy_guarantee(params)
        charged = guarantee if self.relation == "replace_one" else self.charged_guarantee(params)
        if accountant is not None:
            accountant.spend(charged, mechanism=self, privacy_params=params)
        try:
            value = self._release(self._evaluate(self.target(data)), params, generator)
        except Exception as exc:
            if accountant is not None:
                charged_note(exc, charged)
            raise
        # Positional: attrs' __init__ is called a few hundred ns faster without keywords (µs count in small releases).
        assumptions = self._assumptions()
        if assumptions:
            return Response(value, guarantee, self, self.sensitivity, assumptions=assumptions)
        return Response(value, guarantee, self, self.sensitivity)

    def check_dataset(self, X: Any) -> Any:
        """Check what is public about dataset ``X`` before any budget is charged; return the dataset to release on.

        Under replace-one neighbours the number of records, the shape and the types of a dataset are public, so a
        release that cannot work because of them is refused here, before the accountant is charged. A mechanism
        whose sensitivity was sampled for ``sampled_n`` records refuses a dataset of another size (the sampled
        sensitivity says nothing about it), and a dataset whose size is not public metadata (a generator, a dask
        collection of unknown length, ``Chunks`` without ``n_records``): counting it would read the data, which may
        not give the same records twice. Subclasses add their own public checks in ``_check_dataset``; what
        depends on the values themselves (NaN, the target's output) is checked after the charge.
        """
        if type(X) is not np.ndarray:  # a plain array is not masked: the common case, without building the owner name
            refuse_masked(X, owner=type(self).__name__)
        if self.sampled_n is not None:
            size = declared_rows(X)
            if size is None:
                raise SensitivityError(
                    f"The sensitivity of {type(self).__name__} was sampled for datasets of n={self.sampled_n} "
                    f"records and holds only at that n, but the number of records of X ({type(X).__name__}) is not "
                    f"known without reading the data. {_unknown_size_fix(X)}"
                )
            if size != self.sampled_n:
                raise SensitivityError(
                    f"The sensitivity of {type(self).__name__} was sampled for datasets of n={self.sampled_n} "
                    f"records, but X has {size}. A sampled sensitivity only holds at the n it was sampled for; run "
                    f"sensitivity_sampler(oracle, n={size}, ...) again for this dataset."
                )
        return self._check_dataset(X)

    def sensitivity_norm(self, X1: Any, X2: Any) -> float:
        """Distance between the target's outputs on two datasets, in this mechanism's norm (R: ``sensitivityNorm``).

        The sensitivity sampler calls this on neighbouring datasets; a new mechanism gets the sampler for free by
        implementing ``_norm``.
        """
        return float(self._norm(self._evaluate(self.target(X1)), self._evaluate(self.target(X2))))

    def check_privacy_params(self, privacy_params: Any) -> Eps:
        """Validate the privacy parameters and the sensitivity for a release; return the parameters."""
        kind = self.privacy_params_type
        if not isinstance(privacy_params, kind):
            example = "Del(epsilon=1.0, delta=1e-6)" if kind.__name__ == "Del" else "Eps(epsilon=1.0)"
            raise TypeError(
                f"The 'privacy_params' of {type(self).__name__} must be {kind.__name__} privacy parameters; got "
                f"{privacy_params!r}. Pass e.g. {example}."
            )
        if not math.isfinite(self.sensitivity):
            raise SensitivityError(
                f"The sensitivity of {type(self).__name__} is {self.sensitivity}, so a release would be pure noise "
                "(or no privacy at all). Set sensitivity= to the target's global sensitivity, or estimate it with "
                "mech.sensitivity_sampler(oracle, n=...)."
            )
        self._check_params(privacy_params)
        return privacy_params

    def privacy_guarantee(self, privacy_params: Eps) -> Eps:
        """The guarantee a release at ``privacy_params`` gives: random DP (a ``Gam``) if the sensitivity was sampled."""
        if self.gamma_sensitivity is None:
            return privacy_params
        return privacy_params.to_gamma(self.gamma_sensitivity)

    def sensitivity_sampler(
        self,
        oracle: Callable[..., Any],
        n: int,
        m: int | None = None,
        gamma: float | None = None,
        *,
        rng: RNGLike = None,
        n_jobs: int | None = None,
        progress: bool = False,
        time_budget: float | None = None,
    ) -> DPMech:
        """Estimate the sensitivity by sampling; return a new mechanism with it set (R: ``sensitivitySampler``).

        See :func:`diffpriv_py.sensitivity.sample_sensitivity` for the parameters and the guarantee.
        """
        # Deferred import: the sampler is built on mechanisms, not the other way round.
        from .sampler import sample_sensitivity

        return sample_sensitivity(
            self, oracle, n, m=m, gamma=gamma, rng=rng, n_jobs=n_jobs, progress=progress, time_budget=time_budget
        )

    def sensitivity_sampler_manual(
        self,
        oracle: Callable[..., Any],
        n: int,
        m: int,
        k: int,
        *,
        rng: RNGLike = None,
        n_jobs: int | None = None,
        progress: bool = False,
    ) -> DPMech:
        """Set the sensitivity to the ``k``-th smallest of ``m`` sampled ones (R: ``sensitivitySamplerManual``).

        Unlike :meth:`sensitivity_sampler` this does not set ``gamma_sensitivity``: the caller owns the choice of
        ``(m, k)`` and so the guarantee. See :func:`diffpriv_py.sensitivity.sample_sensitivity_manual`.
        """
        from .sampler import sample_sensitivity_manual

        return sample_sensitivity_manual(self, oracle, n, m, k, rng=rng, n_jobs=n_jobs, progress=progress)

    def privacy_events(self, privacy_params: Eps) -> tuple[Event, ...]:
        """What one release at ``privacy_params`` costs, as accounting events (read by the accountant).

        The default is the claimed guarantee as one event, ``(ApproxDPEvent(ε, δ),)`` of
        :meth:`charged_guarantee` (the claim, in replace-one terms): always sound, composed like any (ε, δ)
        release. A mechanism whose noise is known exactly returns a tighter description (Laplace: a
        ``LaplaceEvent``; Gaussian: a ``GaussianEvent``; DP-SGD:
        its subsampled Gaussian steps), which must still imply the claimed guarantee; an empty tuple means the
        release costs nothing (e.g. zero sensitivity).
        """
        claim = self.charged_guarantee(privacy_params)
        return (ApproxDPEvent(epsilon=claim.epsilon, delta=claim.delta),)

    def charged_guarantee(self, privacy_params: Eps) -> Eps:
        """The guarantee an accountant is charged for a release at ``privacy_params``: :meth:`privacy_guarantee` in
        the accountant's replace-one terms. Under :attr:`relation` add/remove, (ε, δ) becomes (2ε, (1 + e^ε)δ) by
        group privacy (:func:`~diffpriv_py.events.guarantee_event`)."""
        claim = self.privacy_guarantee(privacy_params)
        if self.relation == "replace_one":
            return claim
        event = guarantee_event(claim.epsilon, claim.delta, self.relation)
        return Del(event.epsilon, event.delta) if event.delta > 0 else Eps(event.epsilon)

    def half_width(self, privacy_params: Eps, noised: Any, alpha: float) -> Any:
        """Half-width h with P(|noised − exact target| ≤ h) ≥ 1 − ``alpha`` per coordinate, in :attr:`accuracy_units`.

        ``alpha`` is already validated (and divided for a simultaneous bar) by the caller,
        :func:`diffpriv_py.accuracy.half_width` or :meth:`Response.accuracy <diffpriv_py.Response.accuracy>`. The bar
        must depend only on public quantities (the calibration, ``privacy_params``, ``alpha`` and the released
        ``noised``), so computing it is post-processing. The default raises ``NotImplementedError``: the release has
        no closed-form error bar.
        """
        raise NotImplementedError(
            f"Error bars are available for the Laplace, Gaussian and DiscreteLaplace mechanisms and the dp.stats "
            f"functions built on them (and quantiles, in rank units); {type(self).__name__} releases have no "
            "closed-form error bar here. Estimate the error empirically, e.g. by releasing on public data of the "
            "same size with several seeds."
        )

    def _sample_many(self, value: Any, privacy_params: Eps, rng: np.random.Generator, n: int) -> Any:
        """``n`` independent releases of one evaluated output, vectorised, as an array with the draws along axis 0
        (for the auditor; not a release path). The default has none: the auditor then releases one at a time."""
        raise NotImplementedError(f"{type(self).__name__} has no vectorised sampler (_sample_many).")

    def privacy_curve(self, claim: Eps) -> Callable[[float], float] | None:
        """A δ(ε′) curve the release claims beyond its (ε, δ), checked by ``dp.testing.audit``; ``None`` (default)
        claims only the point (ε, δ)."""
        return None

    # ---- hooks for subclasses --------------------------------------------------------------------------------

    def _check_samplable(self) -> None:  # noqa: B027 - optional hook
        """Refuse (``TypeError``, saying why) to sample the sensitivity of this configuration; runs before sampling."""

    def _check_params(self, privacy_params: Eps) -> None:  # noqa: B027 - optional hook
        """Mechanism-specific checks of the privacy parameters (e.g. Gaussian needs δ > 0)."""

    def _check_dataset(self, X: Any) -> Any:
        """Public-information checks of the dataset (types, shapes, sizes); runs before the charge. Returns the
        dataset the target is evaluated on (possibly converted, never a modified input)."""
        return X

    def _check_release(self, privacy_params: Eps, data: Any) -> None:  # noqa: B027 - optional hook
        """Public checks that need both the privacy parameters and the dataset's public shape (e.g. whether the
        safe noise can be drawn at the ε each step gets); runs after ``_check_dataset``, before the charge."""

    def _assumptions(self) -> tuple[str, ...]:
        """Public facts the user declared that the guarantee relies on (recorded in ``Response.assumptions``), e.g. a
        classifier's ``classes="observed"``; none by default."""
        return ()

    @abc.abstractmethod
    def _evaluate(self, output: Any) -> Any:
        """Check the target's output and convert it to what ``_norm`` and ``_release`` work on."""

    @abc.abstractmethod
    def _norm(self, value1: Any, value2: Any) -> float:
        """Distance between two evaluated outputs in the norm the sensitivity is measured in."""

    @abc.abstractmethod
    def _release(self, value: Any, privacy_params: Eps, rng: np.random.Generator) -> Any:
        """Randomise one evaluated output; the sensitivity and parameters are already validated."""

    def _probe(self, dataset: Any) -> DPMech:
        """Fill in settings learnt from one public dataset before sampling (numeric mechanisms: ``dims``)."""
        return self


def check_mechanism(
    value: Any, name: str, *, owner: str, example: str = "dp.Laplace(target=..., sensitivity=...)"
) -> DPMech:
    """Refuse an argument that should be a mechanism but is not a :class:`DPMech`, with a clear TypeError."""
    if not isinstance(value, DPMech):
        raise TypeError(
            f"The '{name}' argument of {owner} must be a mechanism (a DPMech such as {example}). Got {value!r} (type "
            f"{type(value).__name__})."
        )
    return value


def _dims(value: SupportsIndex | None) -> int | None:
    return None if value is None else check_size(value, "dims", owner="the mechanism")


@attrs.frozen(kw_only=True)
class NumericMech(DPMech):
    """Abstract additive-noise mechanism for numeric targets (R: ``DPMechNumeric``).

    Parameters
    ----------
    dims : int or None, default None
        Number of values the target returns. When set, every output is checked against it; when ``None`` any
        shape is accepted, and :meth:`sensitivity_sampler` fills it in from one public dataset.

    Notes
    -----
    A subclass writes ``noise_scale`` (the calibration), ``noise_distribution`` (the per-coordinate noise as a
    frozen scipy distribution, used by the conformance kit) and ``_norm``; it may override ``_noise`` with a
    faster or hardened sampler. The target's output is returned with its shape: a scalar target gives a float.
    """

    dims: int | None = attrs.field(default=None, converter=_dims)

    @abc.abstractmethod
    def noise_scale(self, privacy_params: Eps) -> float:
        """The scale of the per-coordinate noise for a release at ``privacy_params``."""

    @abc.abstractmethod
    def noise_distribution(self, privacy_params: Eps) -> rv_continuous:
        """The per-coordinate noise a release at ``privacy_params`` adds, as a frozen scipy distribution."""

    def _noise(self, shape: tuple[int, ...], privacy_params: Eps, rng: np.random.Generator) -> np.ndarray:
        result: np.ndarray = self.noise_distribution(privacy_params).rvs(size=shape, random_state=rng)
        return result

    def _evaluate(self, output: Any) -> np.ndarray:
        kind = type(output)
        if kind is float or kind is np.float64:
            # The common scalar target (a mean, a sum): a 0-d float64 array, its checks in scalar arithmetic; the
            # general checks below run only to raise the right error.
            values = np.array(output)
            if (self.dims is None or self.dims == 1) and math.isfinite(output):
                return values
        else:
            if isinstance(output, np.ma.MaskedArray):  # np.asarray would drop the mask and release masked values
                raise TargetOutputError(
                    f"Non-private target output is a numpy masked array: {type(self).__name__} would release its "
                    "masked values too. Return output.compressed() or output.filled(value) from the target."
                )
            values = np.asarray(output)
        if values.dtype.kind not in "biuf":
            raise TargetOutputError(
                f"Non-private target output non-numeric: {type(self).__name__} needs a number or numeric array, "
                f"got {type(output).__name__} with dtype {values.dtype}."
            )
        if self.dims is not None and values.size != self.dims:
            raise TargetOutputError(
                f"Non-private target output has unexpected dimension: {values.size} values, but dims={self.dims}. "
                "Fix the target or the dims= setting."
            )
        # Integers are always finite; a float scalar is checked without numpy's reduction machinery (µs matter here).
        if values.dtype.kind == "f" and not (
            math.isfinite(values.item()) if values.ndim == 0 else bool(np.isfinite(values).all())
        ):
            raise TargetOutputError(
                "Non-private target output contains NaN or infinite values; a private release of them is not "
                "possible. Clean or clip the data first."
            )
        return values.astype(np.float64, copy=False)

    def _release(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator) -> Any:
        noisy = self._perturb(value[np.newaxis], privacy_params, rng)[0]
        return noisy.item() if noisy.ndim == 0 else noisy

    def _perturb(self, values: np.ndarray, privacy_params: Eps, rng: np.random.Generator) -> np.ndarray:
        """Randomise a stack of evaluated outputs, shape ``(n, *output_shape)``: n independent releases at once.

        The default adds :meth:`_noise`; a subclass whose noise depends on the value (e.g. grid-based safe noise)
        overrides this instead. One release is the stack of one, so this is the single randomisation path.
        """
        result: np.ndarray = values + self._noise(values.shape, privacy_params, rng)
        return result

    def _sample_many(self, value: np.ndarray, privacy_params: Eps, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` independent releases of one evaluated output, vectorised (for auditing; not a release path)."""
        return self._perturb(np.broadcast_to(value, (n, *np.shape(value))), privacy_params, rng)

    def half_width(self, privacy_params: Eps, noised: Any, alpha: float) -> Any:
        """Per-coordinate half-width of the noise (see :meth:`DPMech.half_width`), with the shape of ``noised``.

        A numeric release's bar is its noise's: a subclass writes ``_noise_half_width`` (Laplace, Gaussian and
        DiscreteLaplace do); without it, or for a non-numeric ``noised``, there is no closed-form bar.
        """
        values = np.asarray(noised, dtype=np.float64) if not isinstance(noised, (list, tuple)) else np.asarray(noised)
        if values.dtype.kind not in "iuf":
            return super().half_width(privacy_params, noised, alpha)
        width = self._noise_half_width(privacy_params, values, alpha, max(1, values.size))
        return width.item() if np.ndim(noised) == 0 else width

    def _noise_half_width(self, privacy_params: Eps, values: np.ndarray, alpha: float, dims: int) -> np.ndarray:
        """The 1 − α quantile of each coordinate's |noise| (plus the float allowances) for the released ``values``,
        a release of ``dims`` coordinates; the default has none and raises ``NotImplementedError``."""
        result: np.ndarray = DPMech.half_width(self, privacy_params, values, alpha)
        return result

    def _probe(self, dataset: Any) -> NumericMech:
        if self.dims is not None:
            return self
        return attrs.evolve(self, dims=self._evaluate(self.target(dataset)).size)


def grid_output_rounding(noised: np.ndarray, r: float) -> np.ndarray:
    """The rounding a safe sampler on the grid ``r`` adds to a release: the value's grid rounding and the output's.

    Safe noise rounds the value to the grid r (error ≤ r/2) and forms (m + i)·r in floating point: exact below
    2^53·r, otherwise correctly rounded (error ≤ half an ulp of the output).
    """
    result: np.ndarray = r / 2 + np.spacing(np.abs(noised))
    return result
