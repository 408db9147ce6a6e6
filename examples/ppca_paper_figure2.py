"""PPCA versus MOD-SuLQ: captured energy q_F against the privacy parameter α (Chaudhuri, Sarwate & Sinha 2012, Fig. 2).

The paper's synthetic experiment: n = 5000 points in d = 10 drawn from N(0, Σ) with eigenvalues
{0.5, 0.30, 0.04, 0.03, 0.02, 0.01, 0.004, 0.003, 0.001, 0.001}, k = 2, MOD-SuLQ at δ = 0.05, PPCA pure α-DP.
Protocol "clip" (rows clipped to norm 1): x ~ N(0, diag λ), rotated by a random orthogonal matrix, then
x ← x/max(1, ‖x‖) so that every row lies in the unit ball (``data_norm=1``). Each cell is the mean q_F = tr(VᵀAV),
A = XᵀX/n, over independent releases on one dataset.

The reference values (``REFERENCE``, our earlier measurement of this protocol) were measured on another draw of
the dataset (non-private q_F 0.5511; across draws of this protocol it varies by about ±0.005), so the comparison is
on the *gap to non-private*, q_F(PCA) − q_F(method), which does not depend on the draw; the table marks a gap
within 3 standard errors (plus the table's rounding) of the reference as ✓. A second figure traces the Gibbs chains
from random and from the top eigenvectors (the burn-in diagnostic). Writes ``ppca_paper_figure2.png``,
``ppca_gibbs_trace.png`` and ``ppca_paper_figure2.csv`` into ``$DIFFPRIV_PY_OUTPUT`` (default
``examples/output/``). Run: ``python examples/ppca_paper_figure2.py``
"""

# %%
import csv
import math
import os
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import diffpriv_py as dp
from diffpriv_py.estimators import PCA, q_f

QUICK = os.environ.get("DIFFPRIV_PY_QUICK") == "1"
OUTPUT = Path(os.environ.get("DIFFPRIV_PY_OUTPUT", Path(__file__).parent / "output"))
OUTPUT.mkdir(parents=True, exist_ok=True)
START = time.perf_counter()

N, D, K, DELTA = 5000, 10, 2, 0.05
SPECTRUM = np.array([0.5, 0.30, 0.04, 0.03, 0.02, 0.01, 0.004, 0.003, 0.001, 0.001])
ALPHAS = [0.1, 0.5, 2.0] if QUICK else [0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0]
TRIALS = 8 if QUICK else 50

# Our earlier reference run, protocol "clip" (50 trials, one dataset with non-private q_F 0.5511): mean (sd) per α.
REFERENCE_NON_PRIVATE = 0.5511
REFERENCE = {
    "MOD-SuLQ": {
        0.1: (0.309, 0.077),
        0.25: (0.482, 0.033),
        0.5: (0.537, 0.006),
        0.75: (0.545, 0.002),
        1.0: (0.548, 0.001),
        1.5: (0.550, 0.001),
        2.0: (0.550, 0.000),
    },
    "PPCA": {
        0.1: (0.520, 0.009),
        0.25: (0.540, 0.004),
        0.5: (0.545, 0.002),
        0.75: (0.547, 0.001),
        1.0: (0.548, 0.001),
        1.5: (0.549, 0.001),
        2.0: (0.550, 0.001),
    },
}
ROUNDING = 0.0005  # the reference table is rounded to 3 decimals


def synthetic_dataset(rng: np.random.Generator) -> np.ndarray:
    """Protocol "clip": N(0, diag λ) rotated by a uniformly random orthogonal matrix, rows clipped to the unit ball."""
    X = rng.standard_normal((N, D)) * np.sqrt(SPECTRUM)
    rotation, _ = np.linalg.qr(rng.standard_normal((D, D)))
    X = X @ rotation.T
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]


# %%
# One dataset, then independent releases of each method at each α (the seeds are for reproducibility only).
rng = np.random.default_rng(2012)
X = synthetic_dataset(rng)
A = X.T @ X / N
eigenvalues = np.linalg.eigvalsh(A)[::-1]
non_private = float(eigenvalues[:K].sum())
random_subspace = K / D * float(np.trace(A))

# The paper's PPCA is the matrix Bingham at the full ε, which only the opt-in Gibbs sampler targets (its releases warn
# that the ε is not proven for a finite chain); the library's default PPCA is the proven sequential sampler.
mechanisms = {
    "PPCA": (PCA(K, method="ppca", data_norm=1.0, sampler="gibbs"), lambda a: dp.Eps(a)),
    "MOD-SuLQ": (PCA(K, method="mod_sulq", data_norm=1.0), lambda a: dp.Del(a, DELTA)),
}
results: dict[str, dict[float, tuple[float, float]]] = {name: {} for name in mechanisms}
for name, (mech, params) in mechanisms.items():
    for alpha in ALPHAS:
        energies = [q_f(mech.release_response(params(alpha), X, rng=rng).response, X) for _ in range(TRIALS)]
        results[name][alpha] = (float(np.mean(energies)), float(np.std(energies, ddof=1)))

# %%
# The gap to non-private, ours against the reference, with the 3-standard-error acceptance band.
rows = []
print(f"n={N}, d={D}, k={K}, {TRIALS} releases per cell; non-private q_F {non_private:.4f} (reference dataset:")
print(
    f"{REFERENCE_NON_PRIVATE}), random subspace {random_subspace:.4f}, top eigenvalues {np.round(eigenvalues[:3], 3)}"
)
print(f"{'method':<10}{'α':>6}{'q_F (sd)':>18}{'gap':>9}{'ref gap':>9}{'3 SE':>9}  within")
all_within = True
for name in mechanisms:
    for alpha in ALPHAS:
        mean, sd = results[name][alpha]
        ref_mean, ref_sd = REFERENCE[name][alpha]
        gap, ref_gap = non_private - mean, REFERENCE_NON_PRIVATE - ref_mean
        band = 3 * math.sqrt(sd**2 / TRIALS + ref_sd**2 / 50) + 2 * ROUNDING
        within = abs(gap - ref_gap) <= band
        all_within &= within
        rows.append(
            {"method": name, "alpha": alpha, "q_f_mean": mean, "q_f_sd": sd, "gap": gap, "reference_gap": ref_gap}
        )
        mark = "✓" if within else "✗"
        print(f"{name:<10}{alpha:>6g}{mean:>11.4f} ({sd:.4f}){gap:>9.4f}{ref_gap:>9.4f}{band:>9.4f}  {mark}")
ppca_wins = all(results["PPCA"][a][0] >= results["MOD-SuLQ"][a][0] for a in ALPHAS if a <= 0.5)
print(f"every gap within 3 SE of the reference: {all_within}; PPCA ≥ MOD-SuLQ for α ≤ 0.5: {ppca_wins}")

with open(OUTPUT / "ppca_paper_figure2.csv", "w", newline="") as fh:
    writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)

# %%
# The figure: our curves, and the reference table moved by the difference of the non-private levels.
fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=100)
ax.axhline(non_private, color="black", lw=1.2, label="non-private PCA")
ax.axhline(random_subspace, color="grey", ls=":", lw=1.2, label="random subspace")
for name, colour in (("PPCA", "C0"), ("MOD-SuLQ", "C3")):
    means = np.array([results[name][a][0] for a in ALPHAS])
    sds = np.array([results[name][a][1] for a in ALPHAS])
    ax.plot(ALPHAS, means, "o-", color=colour, label=f"{name} (diffpriv_py)")
    ax.fill_between(ALPHAS, means - sds, means + sds, color=colour, alpha=0.15)
    ref = [REFERENCE[name][a][0] - REFERENCE_NON_PRIVATE + non_private for a in ALPHAS]
    ax.plot(ALPHAS, ref, "x", color=colour, ms=8, label=f"{name} (reference, shifted)")
ax.set_xlabel("privacy parameter α (ε)")
ax.set_ylabel("utility q_F(V) = tr(VᵀAV)")
ax.set_title(f"CSS'12 Figure 2: n={N}, d={D}, k={K}, MOD-SuLQ δ={DELTA}")
ax.set_ylim(0.0, 0.6)
ax.legend(fontsize=8, loc="lower right")
fig.tight_layout()
fig.savefig(OUTPUT / "ppca_paper_figure2.png")

# %%
# Burn-in diagnostic on this (synthetic, public) dataset: q_F along Gibbs chains started at random and at the
# non-private top-2 eigenvectors. gibbs_trace reads the data exactly, so it is for public or synthetic data only.
fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.2), dpi=100, sharey=True)
ppca = PCA(K, method="ppca", data_norm=1.0, sampler="gibbs")
sweeps = 12 if QUICK else 30
for ax, alpha in zip(axes, (0.1, 2.0), strict=True):
    for start, colour in (("random", "C0"), ("top", "C1")):
        trace = ppca.gibbs_trace(dp.Eps(alpha), X, n_chains=6, n_sweeps=sweeps, start=start, rng=rng)
        ax.plot(trace.T, color=colour, alpha=0.6, lw=1)
        ax.plot([], [], color=colour, label=f"start: {start}")
    ax.axhline(non_private, color="black", lw=0.8, ls="--")
    ax.set_title(f"α = {alpha:g}")
    ax.set_xlabel("Gibbs sweep")
axes[0].set_ylabel("q_F of the chain's state")
axes[0].legend(fontsize=8)
fig.suptitle(f"PPCA Gibbs chains (default burn-in: {ppca.gibbs_sweeps} sweeps)", fontsize=10)
fig.tight_layout()
fig.savefig(OUTPUT / "ppca_gibbs_trace.png")
print(f"wrote {OUTPUT / 'ppca_paper_figure2.png'} and the trace figure in {time.perf_counter() - START:.1f} s")
