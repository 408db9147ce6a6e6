"""Utility-vs-ε studies: how much predictive accuracy a privatisation costs, with repeats and mean ± sd.

This is the engine of ``diffpriv-py evaluate``. By default it sweeps this library's DP estimators (objective
perturbation, DP-SGD) over ε, in the style of the dp-stats poster's error-vs-privacy plots, next to their
non-private counterparts (ε = ∞) and the constant majority-class baseline. It also reproduces the method of the
PyPryvacy study (Spiess 2023, §3): split the data 80/20, privatise the training split by *input perturbation*
(i.i.d. Laplace or Gaussian noise on every training value), train scikit-learn's kNN, SVM, random forest and
logistic/linear regression on it, and score them on the untouched test split. Two of that study's threats to
validity are addressed: every point is repeated (new split, new noise) and reported as mean ± sd, and k-fold
cross-validation is available.

Examples
--------
>>> from diffpriv_py import datasets, evaluation
>>> iris = datasets.load_dataset("iris")
>>> result = evaluation.evaluate(iris, privatisation="laplace", epsilons=[1, float("inf")], repeats=2, rng=0)
>>> [row["model"] for row in result.summary() if row["metric"] == "accuracy"][:2]
['knn', 'knn']
"""

from .models import DPSGD_EPOCHS as DPSGD_EPOCHS  # the names below __all__ stay reachable at dp.evaluation.<name>
from .models import ESTIMATOR_MODELS, INPUT_MODELS, ModelContext, ModelSpec, resolve_models
from .models import PCA_COMPONENTS as PCA_COMPONENTS
from .models import models_for as models_for
from .privatisation import PRIVATISATIONS
from .result import METRICS as METRICS
from .result import EvaluationResult
from .study import DEFAULT_EPSILONS, PYPRYVACY_EPSILONS, evaluate
from .study import baseline_name as baseline_name

__all__ = [
    "DEFAULT_EPSILONS",
    "ESTIMATOR_MODELS",
    "INPUT_MODELS",
    "PRIVATISATIONS",
    "PYPRYVACY_EPSILONS",
    "EvaluationResult",
    "ModelContext",
    "ModelSpec",
    "evaluate",
    "resolve_models",
]
