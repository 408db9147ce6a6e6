"""Model selection with one privacy budget: a Pipeline, GridSearchCV and cross_val_score around a DP facade.

Every ``fit`` of a facade is one private release, so a grid search is many releases: with G settings and K folds,
``GridSearchCV`` fits G·K models and then refits the best one on all the data, G·K + 1 releases in total. Each is
charged to the *same* accountant (scikit-learn's ``clone`` keeps the accountant object shared), which refuses a fit
that would overspend before any noise is drawn. The chosen hyper-parameter is a function of those private releases
and their scores on held-out folds, so it is covered by the same budget only if the scores are computed on data the
accountant already protects: here the folds are parts of the private training data, and the budget charged is that
of all the fits (the scoring itself reads the held-out rows without noise, which this simple recipe does not
privatise: treat the *choice* as non-private or use the private selection built into the estimators,
``reg_lambda="private"``).

Run with ``python examples/sklearn_model_selection.py``.
"""

# %%
import os

import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, cross_val_score, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

import diffpriv_py as dp
from diffpriv_py.sklearn import LogisticRegression

QUICK = os.environ.get("DIFFPRIV_PY_QUICK") == "1"
n = 4_000 if QUICK else 20_000
X, y = make_classification(n_samples=n, n_features=10, n_informative=5, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0)

# Scaling with a *public* constant (a StandardScaler would learn the mean and variance of the private data): the
# features of make_classification are within about ±6, so dividing by 6 puts most rows inside data_norm = √10.
public_scale = FunctionTransformer(lambda a: np.asarray(a) / 6.0)

# %% One accountant for the whole search: 3 settings × 3 folds + 1 refit = 10 fits at ε = 0.5 each.
accountant = dp.Accountant(budget=dp.Eps(5.0), composition="basic")
model = make_pipeline(
    public_scale,
    LogisticRegression(epsilon=0.5, data_norm=np.sqrt(10), classes=[0, 1], rng=0, accountant=accountant),
)
search = GridSearchCV(model, {"logisticregression__reg_lambda": [1e-3, 1e-2, 1e-1]}, cv=3, error_score="raise")
search.fit(X_train, y_train)
print(f"best reg_lambda: {search.best_params_['logisticregression__reg_lambda']}")
print(f"test accuracy of the refitted model: {search.score(X_test, y_test):.3f}")
print(f"fits charged: {len(accountant.ledger)}; spent {accountant.spent}; remaining {accountant.remaining}")
assert len(accountant.ledger) == 3 * 3 + 1

# %% The budget is a hard limit: one more cross-validation (3 fits at ε = 0.5) would need 1.5 and only 0 is left.
# error_score="raise" lets the refusal through (by default scikit-learn records a failed fit as a NaN score).
try:
    cross_val_score(model, X_train, y_train, cv=3, error_score="raise")
except dp.exceptions.BudgetExceededError as err:
    print(f"refused, nothing charged: {str(err)[:120]}...")
print(f"fits charged after the refusal: {len(accountant.ledger)}")
