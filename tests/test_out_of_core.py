"""Out-of-core data (dask arrays and DataFrames, dp.Chunks): the statistics are computed block by block and the
noise is added once, so for the same seed the release equals the in-memory one.

Exactness: linear regression and k-means put the data on a fixed-point grid on which every sum is exact in any
order, so their releases agree bit for bit. PCA on dyadic data (small integers, a power-of-two norm bound) has exact
products and sums too; on generic floats the Gram matrix differs from the in-memory one in the last bits (blocks
are summed in another order), so the Gaussian-noise methods agree to ~1e-9 while PPCA's sampler may take another
branch. The dp.stats moments likewise agree to ~1e-9 (blockwise sums and Chan's update in another order).
"""

from __future__ import annotations

import numpy as np
import pytest

import diffpriv_py as dp

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

RTOL = 1e-9


def _chunks(a, rows=777):
    """Chunks of uneven row blocks (the last one shorter), as a list: re-iterable."""
    if isinstance(a, tuple):
        return dp.Chunks([tuple(p[i : i + rows] for p in a) for i in range(0, len(a[0]), rows)])
    return dp.Chunks([a[i : i + rows] for i in range(0, len(a), rows)])


def _dask(a, rows=700):
    return da.from_array(a, chunks=(rows, *a.shape[1:]))


@pytest.fixture(scope="module")
def dyadic():
    """Small integers: every product and sum of the PCA Gram matrix is exact, whatever the block order."""
    return np.random.default_rng(0).integers(-3, 4, size=(3000, 4)).astype(np.float64)


@pytest.fixture(scope="module")
def gaussian():
    return np.random.default_rng(1).normal(0.3, 1.0, size=(4000, 3))


# ---- PCA ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", [pytest.param("ppca", marks=pytest.mark.slow), "analyze_gauss", "mod_sulq"])
def test_pca_on_dask_and_chunks_equals_the_in_memory_release(dyadic, method):
    """Every PCA method gives the same components on a dask array, a dask DataFrame and Chunks as in memory."""
    params = dp.Eps(1.0) if method == "ppca" else dp.Del(1.0, 1e-6)
    pca = dp.estimators.PCA(2, method=method, data_norm=8.0)
    expected = pca.release_response(params, dyadic, rng=5).response.components
    frame = dd.from_pandas(pd.DataFrame(dyadic), npartitions=3)
    for data in (_dask(dyadic), frame, _chunks(dyadic)):
        np.testing.assert_array_equal(pca.release_response(params, data, rng=5).response.components, expected)


def test_pca_gram_on_generic_floats_agrees_to_rounding(gaussian):
    """On generic floats the blockwise Gram matrix and the Analyze Gauss release agree to ~1e-9."""
    target = dp.estimators.pca.ClippedGram(2.0)
    expected = target(gaussian)
    got = target(_dask(gaussian))
    assert got.n == expected.n
    np.testing.assert_allclose(got.gram, expected.gram, rtol=RTOL, atol=1e-9)
    pca = dp.estimators.PCA(2, method="analyze_gauss", data_norm=2.0)
    a = pca.release_response(dp.Del(1.0, 1e-6), gaussian, rng=2).response.components
    b = pca.release_response(dp.Del(1.0, 1e-6), _chunks(gaussian), rng=2).response.components
    np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-9)


# ---- linear regression and k-means (exact on their grids) -----------------------------------------------------------


@pytest.mark.parametrize("method", ["adassp", "functional"])
def test_linear_regression_on_dask_and_chunks_equals_the_in_memory_release(gaussian, method):
    """AdaSSP and the functional mechanism release bit-identical models on dask (X, y), a dask DataFrame/Series and
    Chunks of (X, y) blocks."""
    X, y = gaussian, gaussian @ np.array([1.0, -2.0, 0.5]) + 0.1
    params = dp.Del(1.0, 1e-6) if method == "adassp" else dp.Eps(1.0)
    lr = dp.estimators.LinearRegression(method=method, data_norm=4.0, label_bound=(-8, 8))
    expected = lr.release_response(params, (X, y), rng=3).response
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=3)
    series = dd.from_pandas(pd.Series(y), npartitions=3)
    for data in ((_dask(X), _dask(y)), (frame, series), _chunks((X, y))):
        got = lr.release_response(params, data, rng=3).response
        np.testing.assert_array_equal(got.coef, expected.coef)
        assert got.intercept == expected.intercept


def test_regression_pairs_x_and_y_record_by_record_whatever_their_chunks(gaussian):
    """A dask X with a differently chunked dask y, or with a numpy y, still pairs records correctly; a length
    mismatch is refused."""
    X, y = gaussian, gaussian.sum(axis=1)
    lr = dp.estimators.LinearRegression(data_norm=4.0, label_bound=(-6, 6))
    expected = lr.release_response(dp.Del(1.0, 1e-6), (X, y), rng=0).response.coef
    for data in ((_dask(X), _dask(y, rows=500)), (_dask(X), y)):
        np.testing.assert_array_equal(lr.release_response(dp.Del(1.0, 1e-6), data, rng=0).response.coef, expected)
    with pytest.raises(ValueError, match="different numbers of records"):
        lr.release_response(dp.Del(1.0, 1e-6), (_dask(X), y[:-1]), rng=0)


@pytest.mark.parametrize("improved", [True, False])
def test_kmeans_on_dask_and_chunks_equals_the_in_memory_release(improved):
    """DPLloyd (plain and improved) gives identical centroids on dask and Chunks: counts and sums are exact."""
    rng = np.random.default_rng(4)
    X = np.concatenate([rng.normal(-2, 0.5, (2000, 2)), rng.normal(2, 0.5, (2000, 2))])
    km = dp.estimators.KMeans(k=2, bounds=(-4, 4), improved=improved)
    expected = np.asarray(km.release_response(dp.Eps(1.0), X, rng=1).response)
    for data in (_dask(X), _chunks(X)):
        np.testing.assert_array_equal(np.asarray(km.release_response(dp.Eps(1.0), data, rng=1).response), expected)


def test_kmeans_input_perturbation_refuses_out_of_core_data():
    """Input perturbation needs every noisy record in memory, so dask data is refused with the reason."""
    km = dp.estimators.KMeans(k=2, bounds=(-4, 4), method="input_perturbation")
    with pytest.raises(ValueError, match="cannot run on out-of-core data"):
        km.release_response(dp.Eps(1.0), _dask(np.zeros((100, 2))), rng=0)


# ---- dp.stats -------------------------------------------------------------------------------------------------------


CASES = [
    (stat, ndim, axis, nan)
    for stat in ("mean", "sum", "var", "std", "count")
    for ndim, axis in ((1, None), (2, None), (2, 0))
    for nan in ("raise", "omit")
    if not (stat == "count" and nan == "omit")
]


@pytest.mark.parametrize(("stat", "ndim", "axis", "nan_policy"), CASES)
def test_stats_moments_on_dask_and_chunks_agree_with_in_memory(gaussian, stat, ndim, axis, nan_policy):
    """mean/sum/var/std/count on dask and Chunks equal the in-memory release up to float summation order."""
    data = gaussian if ndim == 2 else gaussian[:, 0]
    kwargs = {"axis": axis, "rng": 7} | ({} if stat == "count" else {"bounds": (-2, 2), "nan_policy": nan_policy})
    fn = getattr(dp.stats, stat)
    expected = fn(data, dp.Eps(1.0), **kwargs)
    for lazy in (_dask(data), _chunks(data)):
        np.testing.assert_allclose(fn(lazy, dp.Eps(1.0), **kwargs), expected, rtol=RTOL, atol=1e-9)


@pytest.mark.parametrize("nan_policy", ["raise", "omit"])
def test_covariance_and_histogram_on_dask_and_chunks_agree_with_in_memory(gaussian, nan_policy):
    """covariance (Chan's update of the scatter) and histogram (additive counts) match the in-memory release."""
    cov = dp.stats.covariance(gaussian, dp.Eps(1.0), bounds=(-2, 2), nan_policy=nan_policy, rng=3)
    hist = dp.stats.histogram(gaussian, dp.Eps(1.0), bins=8, range=(-3, 3), axis=0, nan_policy=nan_policy, rng=3)[0]
    for lazy in (_dask(gaussian), _chunks(gaussian)):
        got = dp.stats.covariance(lazy, dp.Eps(1.0), bounds=(-2, 2), nan_policy=nan_policy, rng=3)
        np.testing.assert_allclose(got, cov, rtol=RTOL, atol=1e-9)
        got = dp.stats.histogram(lazy, dp.Eps(1.0), bins=8, range=(-3, 3), axis=0, nan_policy=nan_policy, rng=3)
        np.testing.assert_array_equal(got[0], hist)


def test_stats_on_a_dask_dataframe_agree_with_pandas(gaussian):
    """A dask DataFrame gives the column means of the equivalent pandas DataFrame."""
    frame = pd.DataFrame(gaussian, columns=list("abc"))
    expected = dp.stats.mean(frame, dp.Eps(1.0), bounds=(-2, 2), axis=0, rng=1)
    got = dp.stats.mean(dd.from_pandas(frame, npartitions=4), dp.Eps(1.0), bounds=(-2, 2), axis=0, rng=1)
    np.testing.assert_allclose(got, expected, rtol=RTOL)


def test_stats_on_dask_detect_nan_under_raise():
    """A NaN in a later block is still refused under nan_policy='raise'."""
    x = np.ones(3000)
    x[2500] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        dp.stats.mean(_dask(x), dp.Eps(1.0), bounds=(0, 2), rng=0)


@pytest.mark.parametrize("fn", [dp.stats.quantile, dp.stats.median])
def test_quantiles_refuse_out_of_core_data_with_the_reason(fn):
    """Quantiles need all values in memory: dask data and Chunks are refused, naming the alternative."""
    args = (0.5,) if fn is dp.stats.quantile else ()
    for lazy in (_dask(np.zeros(100)), _chunks(np.zeros(100))):
        with pytest.raises(TypeError, match="all values in memory"):
            fn(lazy, *args, dp.Eps(1.0), bounds=(0, 1))


def test_per_record_statistics_refuse_out_of_core_data():
    """axis=1 (one value per record) is refused on out-of-core data with a clear error."""
    with pytest.raises(ValueError, match="axis=1"):
        dp.stats.mean(_dask(np.zeros((100, 2))), dp.Eps(1.0), bounds=(0, 1), axis=1)


def test_chunks_refuses_a_bare_generator():
    """A bare generator can be read once only; Chunks asks for a list or a factory."""
    with pytest.raises(TypeError, match="re-iterable"):
        dp.Chunks(np.zeros((2, 2)) for _ in range(3))


# ---- data generated chunk by chunk, and a real cluster ---------------------------------------------------------------


def test_data_generated_chunk_by_chunk_larger_than_one_chunk():
    """A Chunks factory generating 40 blocks (never all in memory) gives the release of the concatenated data."""
    blocks, rows, d = 40, 2000, 5

    def generate():
        for i in range(blocks):
            yield np.random.default_rng(i).normal(size=(rows, d))

    data = dp.Chunks(generate)
    assert dp._blockwise.n_rows(data) == blocks * rows
    whole = np.concatenate(list(generate()))
    pca = dp.estimators.PCA(2, method="analyze_gauss", data_norm=3.0)
    a = pca.release_response(dp.Del(1.0, 1e-6), whole, rng=0).response.components
    b = pca.release_response(dp.Del(1.0, 1e-6), data, rng=0).response.components
    np.testing.assert_allclose(b, a, rtol=1e-7, atol=1e-9)
    mean = dp.stats.mean(data, dp.Eps(1.0), bounds=(-3, 3), axis=0, rng=0)
    np.testing.assert_allclose(mean, dp.stats.mean(whole, dp.Eps(1.0), bounds=(-3, 3), axis=0, rng=0), rtol=RTOL)


@pytest.mark.slow
def test_estimators_and_stats_run_on_a_local_cluster():
    """On a 2-process LocalCluster, a lazily generated dask array gives the in-memory releases (PCA, regression,
    k-means, mean), with only per-block statistics travelling back."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        with distributed.Client(cluster):
            X = da.random.default_rng(0).standard_normal((60_000, 4), chunks=(5_000, 4))
            y = X[:, 0] - X[:, 1]
            Xm, ym = X.compute(), y.compute()
            pca = dp.estimators.PCA(2, method="analyze_gauss", data_norm=3.0)
            np.testing.assert_allclose(
                pca.release_response(dp.Del(1.0, 1e-6), X, rng=0).response.components,
                pca.release_response(dp.Del(1.0, 1e-6), Xm, rng=0).response.components,
                rtol=1e-7,
                atol=1e-9,
            )
            lr = dp.estimators.LinearRegression(data_norm=4.0, label_bound=(-5, 5))
            got = lr.release_response(dp.Del(1.0, 1e-6), (X, y), rng=0).response
            np.testing.assert_array_equal(
                got.coef, lr.release_response(dp.Del(1.0, 1e-6), (Xm, ym), rng=0).response.coef
            )
            km = dp.estimators.KMeans(k=3, bounds=(-3, 3))
            np.testing.assert_array_equal(
                np.asarray(km.release_response(dp.Eps(1.0), X.persist(), rng=0).response),
                np.asarray(km.release_response(dp.Eps(1.0), Xm, rng=0).response),
            )
            mean = dp.stats.mean(X, dp.Eps(1.0), bounds=(-3, 3), axis=0, rng=0)
            np.testing.assert_allclose(mean, dp.stats.mean(Xm, dp.Eps(1.0), bounds=(-3, 3), axis=0, rng=0), rtol=RTOL)
    finally:
        cluster.close()


def test_the_number_of_rows_of_a_dask_array_with_known_chunks_is_read_without_computing_a_block():
    """n is public and in the array's shape: counting it must not read the data (a block here would raise)."""

    def unreadable(block):
        raise AssertionError("a block was computed")

    lazy = da.from_array(np.zeros((1000, 3)), chunks=(100, 3)).map_blocks(unreadable, dtype=float)
    assert dp._blockwise.n_rows(lazy) == 1000
    unknown = da.from_array(np.arange(30.0).reshape(10, 3), chunks=(4, 3))
    unknown = unknown[unknown[:, 0] > 5]  # chunk sizes unknown until computed: counted block by block
    assert np.isnan(unknown.shape[0]) and dp._blockwise.n_rows(unknown) == 8
