"""DP-SGD training speed beside scikit-learn's MLPClassifier, and beside the earlier per-step noise loop.

Run: ``PYTHONPATH=. python benchmarks/bench_dpsgd.py [--repeats 11] [--quick]`` (``--quick``: digits only, 5
repeats).
One process, BLAS pinned to one thread (threadpoolctl), CPU time, the variants interleaved seed by seed so that they
see the same load; medians over the repeats, and the ratio of the medians to scikit-learn's.

Setting: the 64-32-10 MLP on scikit-learn's digits (features / 16, 1437 training rows, stratified 80/20 split), 10
epochs, batch size 64, momentum SGD (learning rate 0.1, momentum 0.9), ReLU:

* ``diffpriv_py``: ``DPSGDClassifier(...).release_response(Del(8, 1e-5), ..., rng=seed)`` (σ calibration cached, as
  after the first release; Poisson samples of expected size 64, 225 steps), and once more with ``rng=None`` (the
  AES-CTR secure generator of real releases);
* ``per-step noise``: the same release with the training loop of the previous version (one safe-noise call per step,
  the overflow-safe clipping for every step, per-layer updates), kept here for comparison;
* ``scikit-learn``: ``MLPClassifier(solver="sgd", batch_size=64, max_iter=10, alpha=0, nesterovs_momentum=False,
  tol=0)``: 10 shuffled passes of 23 batches (230 steps), non-private.

A second table repeats the comparison on a larger input (100 000 synthetic rows of 100 features, a 256-128 MLP,
one epoch of batches of 1000, 59 011 weights), where each step's arithmetic outweighs the per-call costs.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from unittest import mock

import numpy as np
from threadpoolctl import threadpool_limits


def _train_per_step(data, sizes, *, activation, noise, q, steps, learning_rate, momentum, clip_norm, rng, progress):
    """The training loop before noise was drawn in blocks (one noise call and one Poisson draw per step)."""
    from diffpriv_py.estimators.dpsgd import _init_layers, _safe_clipped_sum

    n = data.X.shape[0]
    weights, biases = _init_layers(sizes, activation, rng)
    vel_w = [np.zeros_like(w) for w in weights]
    vel_b = [np.zeros_like(b) for b in biases]
    expected = q * n
    offsets = np.cumsum([a.size for a in (*weights, *biases)])[:-1]
    for _ in range(steps):
        batch = np.flatnonzero(rng.random(n) < q)
        if batch.size:
            grad_w, grad_b, _ = _safe_clipped_sum(
                data.X[batch], data.codes[batch], weights, biases, activation, clip_norm
            )
        else:
            grad_w = [np.zeros_like(w) for w in weights]
            grad_b = [np.zeros_like(b) for b in biases]
        noisy = noise.perturb(np.concatenate([g.ravel() for g in (*grad_w, *grad_b)]), rng) / expected
        parts = np.split(noisy, offsets)
        for layer in range(len(weights)):
            vel_w[layer] = momentum * vel_w[layer] - learning_rate * parts[layer].reshape(weights[layer].shape)
            vel_b[layer] = momentum * vel_b[layer] - learning_rate * parts[len(weights) + layer]
            weights[layer] += vel_w[layer]
            biases[layer] += vel_b[layer]
    return weights, biases


def compare(title, data, *, hidden, batch, epochs, repeats, secure=True):
    """Print one table: each variant's median CPU s, its ratio to scikit-learn's, and its test accuracy."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    import diffpriv_py as dp
    from diffpriv_py.estimators import DPSGDClassifier, dpsgd

    X_train, X_test, y_train, y_test = data
    params = dp.Del(8.0, 1e-5)
    mech = DPSGDClassifier(
        hidden_layer_sizes=hidden,
        sampling_rate=batch / len(X_train),
        epochs=epochs,
        classes=np.unique(y_train).tolist(),
    )
    mech.noise_multiplier_for(params)  # calibration (≈ 0.1 s) cached, as for every release after the first

    def ours(seed):
        return mech.release_response(params, (X_train, y_train), rng=seed).response

    def per_step(seed):
        with mock.patch.object(dpsgd, "_train", _train_per_step):
            return mech.release_response(params, (X_train, y_train), rng=seed).response

    def default_rng(seed):
        return mech.release_response(params, (X_train, y_train)).response

    def sklearn(seed):
        clf = MLPClassifier(
            hidden_layer_sizes=hidden,
            solver="sgd",
            batch_size=batch,
            max_iter=epochs,
            learning_rate_init=0.1,
            momentum=0.9,
            nesterovs_momentum=False,
            alpha=0.0,
            tol=0.0,
            n_iter_no_change=10**6,
            random_state=seed,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return clf.fit(X_train, y_train)

    variants = {"diffpriv_py DPSGDClassifier (seeded)": ours}
    if secure:
        variants["diffpriv_py DPSGDClassifier (rng=None, AES-CTR)"] = default_rng
    variants["per-step noise loop (previous version)"] = per_step
    variants["scikit-learn MLPClassifier (non-private)"] = sklearn
    times = {name: [] for name in variants}
    accuracy = {name: [] for name in variants}
    for fn in variants.values():  # warm-up: imports, tables, caches
        fn(0)
    for seed in range(repeats):
        names = list(variants)
        for name in names[seed % len(names) :] + names[: seed % len(names)]:  # rotate the order
            start = time.process_time()
            model = variants[name](seed)
            times[name].append(time.process_time() - start)
            accuracy[name].append(model.score(X_test, y_test))
    reference = statistics.median(times["scikit-learn MLPClassifier (non-private)"])
    print(f"\n### {title} (CPU s, median of {repeats})\n")
    print("| training | CPU s | × scikit-learn | test accuracy (mean ± sd over seeds) |")
    print("|---|---|---|---|")
    for name in variants:
        t = statistics.median(times[name])
        acc = np.array(accuracy[name])
        print(f"| {name} | {t:.3f} | {t / reference:.2f} | {acc.mean():.3f} ± {acc.std():.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--quick", action="store_true", help="5 repeats, digits only")
    args = parser.parse_args()
    repeats = 5 if args.quick else max(5, args.repeats)

    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    digits = train_test_split(X / 16.0, y, test_size=0.2, random_state=0, stratify=y)
    with threadpool_limits(limits=1):
        compare(
            "DP-SGD training, digits 64-32-10 MLP, 10 epochs, batch 64",
            digits,
            hidden=(64, 32),
            batch=64,
            epochs=10,
            repeats=repeats,
        )
        if args.quick:
            return
        rng = np.random.default_rng(0)
        X = rng.normal(size=(105_000, 100)) / 10  # ‖x‖ ≈ 1: a public, data-independent scale
        y = np.argmax(X @ rng.normal(size=(100, 3)), axis=1)
        compare(
            "Larger input: 100 000 × 100 synthetic rows, 100-256-128-3 MLP, 1 epoch, batch 1000",
            (X[:100_000], X[100_000:], y[:100_000], y[100_000:]),
            hidden=(256, 128),
            batch=1000,
            epochs=1,
            repeats=5,
            secure=False,
        )


if __name__ == "__main__":
    main()
