"""
Tutorial: private group-by with error bars
==========================================

Counts and means per group of a table in which one person can own several rows, on the UCI Adult census data
shipped with the package. We give every person a synthetic id and repeat their row one to four times (think
"visits"), then release statistics per occupation and per country of origin: with public keys, with keys chosen
privately (partition selection), and with each person's contribution bounded. Every released number comes with
an error bar.

Run it with ``python examples/tutorial_groupby.py`` or open it as a notebook with
``jupytext --to notebook examples/tutorial_groupby.py``.
"""

# %%
import os

import numpy as np

import diffpriv_py as dp
import diffpriv_py.pandas  # registers DataFrame.private
from diffpriv_py.datasets import load_adult

QUICK = os.environ.get("DIFFPRIV_PY_QUICK") == "1"
rng = np.random.default_rng(1994)
people = load_adult(as_frame=True)
if QUICK:
    people = people.sample(8000, random_state=0)
people = people.assign(pid=np.arange(len(people)))
visits = people.loc[people.index.repeat(rng.integers(1, 5, len(people)))].reset_index(drop=True)
print(f"{len(people)} people, {len(visits)} rows; the most rows of one person: {visits.pid.value_counts().max()}")

# %% [markdown]
# Counts with public keys
# -----------------------
# The list of occupations is public (it is the survey's questionnaire), so we pass it as ``keys=``: every key is
# released, and no budget is spent on deciding which groups exist. ``privacy_unit="pid"`` says who is behind
# each row; ``max_rows=4`` keeps at most four rows per person and group (here nobody loses a row), and the noise
# is calibrated so that replacing *one person with all their rows* is hidden.

# %%
occupations = sorted(people.occupation.dropna().unique())
counts = visits.private.groupby(
    "occupation",
    dp.Eps(1.0),
    keys=occupations,
    privacy_unit="pid",
    max_groups=1,
    max_rows=4,
    rng=rng,
)
true = visits.groupby("occupation", observed=True).size()
print(counts.assign(true=true.reindex(counts.index)).head(8))

# %% [markdown]
# Reading the error bars
# ----------------------
# ``count_accuracy`` is the half-width h such that the released count is within h of the exact one with
# probability at least 95% (``alpha=0.05``), for each group,
# computed from the noise's calibration alone, so it costs no budget. Bounding contributions at 4 rows per
# person multiplies the noise by 4: a count of rows is a statistic of people with up to 4 rows each.

# %%
inside = (counts["count"] - true.reindex(counts.index)).abs() <= counts["count_accuracy"]
print(f"{inside.mean():.0%} of the groups are within their error bar (about 95% expected)")

# %% [markdown]
# Means with unknown keys: partition selection
# --------------------------------------------
# Countries of origin are a long tail: several appear for only a handful of people. Releasing a group because it
# exists in the data would reveal that someone from that country is in the table, so without public keys the
# groups are *selected privately*: a group is released only if its noisy number of people clears a threshold
# calibrated to (ε, δ). A group backed by one person is released with probability at most δ.

# %%
by_country = visits.private.groupby(
    "native-country",
    dp.Del(1.0, 1e-6),
    column="hours-per-week",
    statistics=["count", "mean"],
    bounds=(0, 100),
    privacy_unit="pid",
    max_groups=1,
    max_rows=1,
    rng=rng,
)
people_per_country = people["native-country"].astype(str).value_counts()
dropped = people_per_country.drop(by_country.index, errors="ignore")
print(by_country.round(2).head(10))
print(f"released {len(by_country)} of {people_per_country.size} countries; the dropped ones have at most "
      f"{dropped.max()} people each (the largest released one has {people_per_country.max()})")  # fmt: skip

# %% [markdown]
# ``max_rows=1`` keeps one uniformly random row per person: the mean of hours is then a mean over people, and
# the sensitivity is that of one row. The mean's error bar combines the bars of the noisy count and the noisy
# (centred) sum by a union bound, so it is conservative; it is wide for small groups, where the mean is worth
# little anyway.

# %%
small = by_country.sort_values("count").head(3)
print(small[["count", "mean", "mean_accuracy"]].round(2))

# %% [markdown]
# Quantiles per group
# -------------------
# ``quantiles=`` adds a private quantile per group: a point of a public grid between the bounds, drawn by the
# exponential mechanism. Its error bar is in *ranks*: how many people would have to move for the released point
# to be the exact quantile.

# %%
medians = visits.private.groupby(
    "sex",
    dp.Del(1.0, 1e-6),
    column="age",
    statistics=["count"],
    quantiles=[0.5],
    bounds=(17, 90),
    privacy_unit="pid",
    max_rows=1,
    rng=rng,
)
print(medians.assign(true=people.groupby("sex", observed=True).age.median()).round(1))

# %% [markdown]
# One budget for the whole query
# ------------------------------
# All statistics of one group-by are one release: an accountant is charged once, before the data are read, and
# the budget is split equally over partition selection and the noised vectors (documented in
# ``dp.stats.GroupBy``).

# %%
acc = dp.Accountant(budget=dp.Del(2.0, 1e-5))
visits.private.groupby(
    "sex",
    dp.Del(1.0, 1e-6),
    column="age",
    statistics=["count", "mean", "std"],
    bounds=(17, 90),
    privacy_unit="pid",
    max_rows=1,
    accountant=acc,
    rng=rng,
)
print(acc.ledger[0].describe())
