"""
Tutorial: DP descriptive statistics
===================================

The dp-stats poster's first functions, mean, variance and histogram, plus counts, quantiles and covariance,
on the UCI Adult census data shipped with the package; then the same through the pandas accessor. Every
function takes *public* bounds: they clip the data and fix the sensitivity, and are never read from the data.

Run it with ``python examples/tutorial_statistics.py`` or open it as a notebook with
``jupytext --to notebook examples/tutorial_statistics.py``.
"""

# %%
import numpy as np

import diffpriv_py as dp
from diffpriv_py.datasets import load_adult

rng = np.random.default_rng(1994)
adult = load_adult(encoding="ordinal")
age = adult.data[:, adult.feature_names.index("age")]
hours = adult.data[:, adult.feature_names.index("hours-per-week")]
print(f"{adult.n_records} people; true mean age {age.mean():.2f}, true mean hours {hours.mean():.2f}")

# %% [markdown]
# Mean, variance, standard deviation
# ----------------------------------
# Bounds are public knowledge (ages between 17 and 90 in this survey's design, hours between 0 and 100).
# The mean of n values clipped to [a, b] has sensitivity (b − a)/n.

# %%
eps = dp.Eps(0.5)
print("mean age     ", round(dp.stats.mean(age, eps, bounds=(17, 90), rng=rng), 3))
print("variance age ", round(dp.stats.var(age, eps, bounds=(17, 90), rng=rng), 3), " true", round(age.var(), 3))
print("std of hours ", round(dp.stats.std(hours, eps, bounds=(0, 100), rng=rng), 3), " true", round(hours.std(), 3))

# %% [markdown]
# The full response
# -----------------
# ``full_response=True`` returns the ``Response``, with the guarantee and the sensitivity used.

# %%
r = dp.stats.mean(age, eps, bounds=(17, 90), rng=rng, full_response=True)
print(r.response, r.privacy_params, f"sensitivity {r.sensitivity:.2e}")

# %% [markdown]
# Histograms and counts
# ---------------------
# Bin edges are public; one person moves between two bins, so the counts get integer noise calibrated to an
# L1 sensitivity of 2. The result has numpy's ``(counts, edges)`` shape. A count takes a predicate per record.

# %%
counts, edges = dp.stats.histogram(age, eps, bins=8, range=(17, 90), rng=rng)
true_counts, _ = np.histogram(age, bins=8, range=(17, 90))
for lo, hi, c, t in zip(edges[:-1], edges[1:], counts, true_counts, strict=True):
    print(f"ages {lo:5.1f}-{hi:5.1f}: private {c:6d}   true {t:6d}")
# Under replace-one neighbours the number of records is public; what is private is who satisfies a predicate.
print("people over 65:", dp.stats.count(age > 65, eps, rng=rng), "  true", int(np.sum(age > 65)))

# %% [markdown]
# Quantiles
# ---------
# Quantiles use the exponential mechanism over a public grid of candidates between the bounds (1025 points by
# default), so the answer is a grid point, and the set of possible answers never depends on the data.
# `n_candidates` sets the resolution: 74 points from 17 to 90 are the whole years.

# %%
print("median age  ", dp.stats.median(age, eps, bounds=(17, 90), n_candidates=74, rng=rng), "  true", np.median(age))
print("quartiles   ", dp.stats.quantile(hours, [0.25, 0.75], eps, bounds=(0, 100), rng=rng))

# %% [markdown]
# Several columns at once
# -----------------------
# With ``axis=0`` each column is released with its own bounds; the ε is shared across the columns (the
# docstrings give the split).

# %%
both = np.column_stack([age, hours])
print("column means", dp.stats.mean(both, eps, bounds=([17, 0], [90, 100]), axis=0, rng=rng))
print("covariance\n", np.round(dp.stats.covariance(both, eps, bounds=([17, 0], [90, 100]), rng=rng), 2))

# %% [markdown]
# The pandas accessor
# -------------------
# ``import diffpriv_py.pandas`` registers ``.private`` on Series and DataFrames (PyPryvacy's idea). Each call
# is a new private sample.

# %%
try:
    import diffpriv_py.pandas  # noqa: F401
except ImportError:
    print("pandas is not installed; skipping the accessor")
else:
    frame = load_adult(as_frame=True)
    print("private mean age:", round(frame["age"].private.mean(eps, bounds=(17, 90), rng=rng), 3))
    print("private mean age:", round(frame["age"].private.mean(eps, bounds=(17, 90), rng=rng), 3), "(a new sample)")
    print("private median hours:", frame["hours-per-week"].private.median(eps, bounds=(0, 100), rng=rng))
