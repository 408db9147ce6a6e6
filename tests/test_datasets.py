"""Bundled data: UCI Adult shipped in the package, scikit-learn's sets, user CSVs, and the name oracle."""

from __future__ import annotations

import hashlib
import lzma
from importlib import resources

import numpy as np
import pytest

from diffpriv_py import datasets


def test_adult_ships_the_original_files_unchanged():
    """The xz copies decompress to the UCI files byte for byte (checksums from the shared data README)."""
    expected = {
        "adult.data.xz": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
        "adult.test.xz": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    }
    for name, digest in expected.items():
        raw = lzma.decompress(resources.files("diffpriv_py").joinpath("data", name).read_bytes())
        assert hashlib.sha256(raw).hexdigest() == digest


def test_adult_license_attribution_is_shipped():
    """The CC BY 4.0 attribution travels with the data."""
    text = resources.files("diffpriv_py").joinpath("data", "ADULT_LICENSE").read_text()
    assert "CC BY 4.0" in text and "10.24432/C5XW20" in text


def test_load_adult_has_the_documented_sizes_and_label_rate():
    """Train 32,561 and test 16,281 records; about 24% earn more than $50K."""
    train = datasets.load_adult()
    test = datasets.load_adult(subset="test")
    assert train.data.shape == (32561, 105) and test.data.shape == (16281, 105)
    assert train.task == "classification" and train.target_names == ("<=50K", ">50K")
    assert int(train.target.sum()) == 7841 and int(test.target.sum()) == 3846
    assert datasets.load_adult(subset="all").n_records == 48842


def test_load_adult_one_hot_groups_hold_at_most_one_category():
    """Each categorical group is one-hot: one 1 per record, or all zeros where the value is missing ('?')."""
    adult = datasets.load_adult()
    names = np.array(adult.feature_names)
    for column in datasets.ADULT_CATEGORIES:
        block = adult.data[:, np.char.startswith(names, column + "=")]
        assert set(np.unique(block.sum(axis=1))) <= {0.0, 1.0}
    workclass = adult.data[:, np.char.startswith(names, "workclass=")]
    assert int((workclass.sum(axis=1) == 0).sum()) == 1836  # the '?' entries of adult.data


def test_load_adult_ordinal_and_return_x_y():
    """Ordinal encoding gives 14 features with -1 for missing; return_X_y gives the (X, y) tuple."""
    X, y = datasets.load_adult(encoding="ordinal", return_X_y=True)
    assert X.shape == (32561, 14) and y.shape == (32561,)
    assert X[:, 1].min() == -1
    assert X[0, 0] == 39 and X[0, 2] == 77516


def test_load_adult_as_frame_matches_the_raw_records():
    """as_frame=True gives the 15 raw columns with categories and missing values as NaN."""
    pytest.importorskip("pandas")
    frame = datasets.load_adult(as_frame=True)
    assert list(frame.columns) == list(datasets.ADULT_COLUMNS)
    assert frame.loc[0, "workclass"] == "State-gov" and frame.loc[0, "age"] == 39
    assert frame["income"].eq(">50K").sum() == 7841
    assert frame["workclass"].isna().sum() == 1836


def test_load_adult_rejects_unknown_options():
    """Unknown subset or encoding names raise a clear ValueError."""
    with pytest.raises(ValueError, match="subset"):
        datasets.load_adult(subset="validation")
    with pytest.raises(ValueError, match="encoding"):
        datasets.load_adult(encoding="binary")


def test_load_adult_returns_fresh_arrays():
    """Changing a returned array does not change the next load (the parse cache is never exposed)."""
    first = datasets.load_adult()
    first.data[:] = 0
    assert datasets.load_adult().data[0, 0] == 39


@pytest.mark.parametrize(
    ("name", "shape", "task"),
    [
        ("iris", (150, 4), "classification"),
        ("wine", (178, 13), "classification"),
        ("breast_cancer", (569, 30), "classification"),
        ("digits", (1797, 64), "classification"),
        ("diabetes", (442, 10), "regression"),
    ],
)
def test_load_dataset_wraps_scikit_learn_bundled_sets(name, shape, task):
    """The scikit-learn datasets load offline with their task."""
    pytest.importorskip("sklearn")
    data = datasets.load_dataset(name)
    assert data.data.shape == shape and data.task == task and data.name == name


def test_load_dataset_rejects_unknown_names_listing_the_choices():
    """An unknown name lists the available datasets."""
    with pytest.raises(ValueError, match="breast_cancer"):
        datasets.load_dataset("mnist")


def test_load_csv_one_hot_encodes_text_and_fills_missing(tmp_path):
    """A CSV with text columns and gaps loads with one-hot features, median fill, and integer class codes."""
    pytest.importorskip("pandas")
    path = tmp_path / "people.csv"
    path.write_text("age,city,label\n30,Paris,yes\n,Rome,no\n50,Paris,yes\n40,?,no\n")
    data = datasets.load_csv(path, target="label")
    assert data.task == "classification" and data.target_names == ("no", "yes")
    assert data.target.tolist() == [1, 0, 1, 0]
    assert data.feature_names == ("age", "city_Paris", "city_Rome")
    assert data.data[1, 0] == 40.0  # median of 30, 50, 40


def test_load_csv_infers_regression_for_a_continuous_target(tmp_path):
    """A real-valued target makes a regression dataset."""
    path = tmp_path / "r.csv"
    path.write_text("x,y\n" + "".join(f"{i},{i * 0.37:.3f}\n" for i in range(30)))
    data = datasets.load_csv(path, target="y")
    assert data.task == "regression" and data.target_names is None


@pytest.mark.parametrize(
    ("content", "target", "match"),
    [
        ("a,b\n1,2\n", "c", "no column 'c'"),
        ("a\n1\n2\n", "a", "at least one feature"),
        ("a,b\n1,3\n2,3\n", "b", "single class"),
    ],
)
def test_load_csv_errors_say_what_is_wrong(tmp_path, content, target, match):
    """A missing target column, no features, or a one-class target raise a clear ValueError."""
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(ValueError, match=match):
        datasets.load_csv(path, target=target)


def test_load_csv_missing_file_is_file_not_found(tmp_path):
    """A bad path raises FileNotFoundError naming the path."""
    with pytest.raises(FileNotFoundError, match=r"nope\.csv"):
        datasets.load_csv(tmp_path / "nope.csv", target="y")


def test_random_names_is_an_oracle_of_first_last_names():
    """random_names(n, rng) returns n 'First Last' strings from the shipped lists, reproducibly for a seed."""
    names = datasets.random_names(50, rng=3)
    assert len(names) == 50 and names == datasets.random_names(50, rng=3)
    firsts, lasts = set(datasets.first_names()), set(datasets.last_names())
    assert all(first in firsts and last in lasts for first, last in (n.split(" ") for n in names))
    assert len(firsts) > 150 and len(lasts) > 150


def test_letter_counts_counts_a_to_z_case_insensitively():
    """The score of the vignette's letter example counts each letter a–z, ignoring case and other characters."""
    counts = datasets.letter_counts(["Ab c", "aZ-"])
    assert counts.shape == (26,)
    assert counts[0] == 2 and counts[1] == 1 and counts[2] == 1 and counts[25] == 1 and counts.sum() == 5


def test_load_adult_bounded_lies_in_the_unit_cube_with_a_public_row_norm():
    """bounded=True drops fnlwgt, scales by the public ADULT_BOUNDS, and keeps every row within norm √13."""
    adult = datasets.load_adult(bounded=True)
    assert adult.data.shape == (32561, 104) and "fnlwgt" not in adult.feature_names
    assert adult.data.min() >= 0.0 and adult.data.max() <= 1.0
    assert np.linalg.norm(adult.data, axis=1).max() <= np.sqrt(13)
    assert adult.data[0, 0] == pytest.approx(39 / 100)  # age 39 with the public bound [0, 100]
    with pytest.raises(ValueError, match="onehot"):
        datasets.load_adult(bounded=True, encoding="ordinal")
