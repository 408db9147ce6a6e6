"""The documentation site builds with warnings as errors (as in CI), and every page is reachable."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import name_the_extra

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.mark.slow
def test_the_docs_build_with_warnings_as_errors(tmp_path):
    """``sphinx-build -W`` succeeds: API reference from docstrings, MyST pages, tutorials gallery, example pages."""
    for module in ("sphinx", "numpydoc", "myst_parser", "sphinx_gallery"):
        pytest.importorskip(module)
    out = tmp_path / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    done = subprocess.run(
        [*command, "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "DIFFPRIV_PY_DOCS_EXECUTE": "1"},  # the tutorials run, as in the published site
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-5000:]
    index = (out / "index.html").read_text(encoding="utf-8")
    for page in ("getting_started", "concepts", "cli", "reproductions", "api/index"):
        assert f'href="{page}.html"' in index, page
    assert (out / "api" / "_gen" / "generated" / "diffpriv_py.Laplace.html").exists()
    assert (out / "auto_examples" / "index.html").exists()
    assert (out / "_gen_examples" / "index.html").exists()
    # Each tutorial page shows what its code printed, and the evaluation tutorial its figure.
    for tutorial in TUTORIALS:
        page = (out / "auto_examples" / f"{tutorial.stem}.html").read_text(encoding="utf-8")
        assert 'class="sphx-glr-script-out' in page, f"{tutorial.name}: no printed output on its page"
    evaluation = (out / "auto_examples" / "tutorial_evaluation.html").read_text(encoding="utf-8")
    figure = re.search(r'<img[^>]+src="(\.\./_images/sphx_glr_tutorial_evaluation_\d+\.png)"', evaluation)
    assert figure, "tutorial_evaluation.html shows no figure"
    assert (out / "auto_examples" / figure.group(1)).resolve().stat().st_size > 10_000
    # Code blocks get a column wide enough for the project's 120-character lines.
    assert 'href="_static/wide.css' in index


def test_every_docs_page_is_in_the_table_of_contents():
    """Each top-level page is listed in conf.TOC or falls under "More", so none is orphaned."""
    pytest.importorskip("sphinx")
    sys.path.insert(0, str(DOCS))
    try:
        import conf  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(DOCS))
    toc = conf.toctree_markdown()
    for page in [*DOCS.glob("*.md"), *DOCS.glob("*.rst")]:
        if page.stem not in conf.GENERATED_TOP_LEVEL:
            assert f"\n{page.stem}\n" in toc, page.name


MY_PAGES = ["getting_started", "concepts", "mechanisms", "sensitivity_sampler", "cli", "reproductions", "sklearn"]


def _python_blocks(page: Path) -> list[str]:
    """The ```python fenced blocks of a MyST page, in order."""
    blocks, current = [], None
    for line in page.read_text(encoding="utf-8").splitlines():
        if current is None and line.strip() == "```python":
            current = []
        elif current is not None and line.strip() == "```":
            blocks.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return blocks


@pytest.mark.slow
@pytest.mark.parametrize("name", MY_PAGES)
def test_the_python_snippets_of_a_page_run(name, tmp_path, monkeypatch):
    """Every ```python block of the page runs, in order, in one namespace (as a reader would paste them)."""
    page = DOCS / f"{name}.md"
    if not page.exists():
        pytest.skip(f"{page.name} not written")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": f"docs_{name}"}
    for number, block in enumerate(_python_blocks(page), start=1):
        try:
            exec(compile(block, f"{page.name}[block {number}]", "exec"), namespace)
        except ImportError as err:
            pytest.skip(name_the_extra(f"could not import '{err.name}': {err}"))


TUTORIALS = sorted((DOCS.parent / "examples").glob("tutorial_*.py"))


@pytest.mark.parametrize("script", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorials_are_gallery_and_jupytext_compatible(script):
    """A tutorial opens with an underlined rST title (sphinx-gallery) and is split into jupytext percent cells."""
    import ast

    text = script.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(text), clean=True) or ""
    title, underline = [*doc.splitlines(), "", ""][:2]
    assert title and set(underline) == {"="} and len(underline) >= len(title), script.name
    assert text.count("\n# %% [markdown]\n") >= 2 and text.count("\n# %%\n") >= 2
    jupytext = pytest.importorskip("jupytext")
    notebook = jupytext.reads(text, fmt="py:percent")
    kinds = [cell.cell_type for cell in notebook.cells]
    assert kinds.count("markdown") >= 2 and kinds.count("code") >= 2
