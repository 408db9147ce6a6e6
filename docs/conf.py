"""Sphinx configuration for the diffpriv_py documentation (built in CI with ``sphinx-build -W``).

Pages are MyST Markdown (``docs/*.md``). The API reference is generated from the docstrings (numpydoc) of every
public module that imports, each object documented once at its most public name. The tutorials
(``examples/tutorial_*.py``) form a sphinx-gallery executed at build time with their quick settings
(``DIFFPRIV_PY_QUICK=1``), so each page shows what its code prints and the figures it draws; sphinx-gallery reruns
only the tutorials whose source changed since the last build (delete ``docs/auto_examples`` to rerun them all after
a change to the library). ``DIFFPRIV_PY_DOCS_EXECUTE=0`` turns execution off for a fast draft build. The other
example scripts get a page each with their source (CI runs every example in ``tests/test_examples.py``).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import tempfile
import textwrap
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

import diffpriv_py  # noqa: E402

project = "diffpriv_py"
author = "diffpriv_py developers"
copyright = "diffpriv_py developers"
release = diffpriv_py.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "auto_examples/*.ipynb", "auto_examples/*.py"]
templates_path: list[str] = []

# ---- MyST -------------------------------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# ---- autodoc / numpydoc ------------------------------------------------------------------------------------------
autosummary_generate = True
autodoc_typehints = "none"  # numpydoc docstrings carry the types; signatures stay readable
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = False

# ---- HTML ----------------------------------------------------------------------------------------------------------
html_theme = "alabaster"
html_static_path = ["_static"]
html_css_files = ["wide.css"]  # a column wide enough for 120-character code lines (see the file)
html_title = f"diffpriv_py {release}"
html_theme_options = {
    "body_max_width": "none",  # the column's width is set by wide.css, not capped at 800 px
    "description": "Differential privacy for Python, after the R package diffpriv",
    "fixed_sidebar": True,
    "sidebar_collapse": True,
}

# ---- tutorials gallery -------------------------------------------------------------------------------------------
EXECUTE = os.environ.get("DIFFPRIV_PY_DOCS_EXECUTE", "1") != "0"
if EXECUTE:
    # The quick settings keep the whole gallery to well under a minute; files the tutorials write go to a scratch
    # directory, not the source tree; figures render without a display.
    os.environ.setdefault("DIFFPRIV_PY_QUICK", "1")
    os.environ.setdefault("DIFFPRIV_PY_OUTPUT", tempfile.mkdtemp(prefix="diffpriv_py_docs_"))
    os.environ.setdefault("MPLBACKEND", "Agg")

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "ignore_pattern": r"^(?!tutorial_)",  # the tutorials; every other script gets a source page (below)
    "filename_pattern": r"tutorial_",
    "plot_gallery": "True" if EXECUTE else "False",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "show_signature": False,
    "image_scrapers": ("matplotlib",) if EXECUTE else (),
    "min_reported_time": 1,
}

# ---- generated pages: the API reference and the example sources -------------------------------------------------

API_MODULES: list[tuple[str, str]] = [
    ("diffpriv_py", "The top level: import diffpriv_py as dp"),
    ("diffpriv_py.mechanisms", "Mechanisms"),
    ("diffpriv_py.sensitivity", "Sensitivity sampler"),
    ("diffpriv_py.approximation", "Bernstein approximation"),
    ("diffpriv_py.estimators", "DP estimators"),
    ("diffpriv_py.stats", "DP descriptive statistics"),
    ("diffpriv_py.pandas", "pandas accessor"),
    ("diffpriv_py.sklearn", "scikit-learn facades"),
    ("diffpriv_py.accounting", "Privacy accounting"),
    ("diffpriv_py.testing", "Conformance kit and privacy auditor"),
    ("diffpriv_py.datasets", "Bundled datasets"),
    ("diffpriv_py.evaluation", "Utility-vs-ε evaluations"),
    ("diffpriv_py.cli", "Command line"),
    ("diffpriv_py.extras", "Optional dependencies"),
    ("diffpriv_py.validation", "Argument checks"),
    ("diffpriv_py.exceptions", "Errors and warnings"),
]
"""Modules of the API reference, most public first: an object is documented under the first name listed here."""

R_ALIASES = [
    "DPParamsEps",
    "DPParamsDel",
    "DPParamsGam",
    "DPMech",
    "DPMechLaplace",
    "DPMechGaussian",
    "DPMechExponential",
    "DPMechBernstein",
    "releaseResponse",
    "sensitivitySampler",
    "sensitivitySamplerManual",
]


def _write_if_changed(path: Path, text: str) -> None:
    """Rewrite a generated page only when its text changes, so incremental builds stay incremental."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _public_names(module: object) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return list(names)


def generate_api_pages() -> list[str]:
    """Write one autosummary page per importable public module under ``api/_gen``; return their names."""
    out = DOCS / "api" / "_gen"
    seen: dict[int, str] = {}
    pages = []
    for number, (modname, title) in enumerate(API_MODULES):
        try:
            module = importlib.import_module(modname)
        except ImportError:
            continue
        functions, classes, other = [], [], []
        for name in _public_names(module):
            obj = getattr(module, name, None)
            if obj is None or inspect.ismodule(obj):
                continue
            if modname == "diffpriv_py" and name in R_ALIASES and name != getattr(obj, "__name__", name):
                continue  # R aliases are listed in their own table
            if id(obj) in seen and (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if inspect.isclass(obj):
                classes.append(name)
            elif callable(obj):
                functions.append(name)
            else:
                other.append(name)
            seen[id(obj)] = f"{modname}.{name}"
        if not (functions or classes or other) and modname != "diffpriv_py":
            continue
        doc = inspect.getdoc(module) or ""
        summary = doc.split("\n\n")[0].replace("\n", " ") if doc else ""
        summary = summary.removeprefix(f"{modname}:").strip()
        lines = [title, "=" * len(title), "", f".. currentmodule:: {modname}", "", f"``{modname}``: {summary}", ""]
        for heading, names in (("Classes", classes), ("Functions", functions)):
            if names:
                lines += [heading, "-" * len(heading), "", ".. autosummary::", "   :toctree: generated/", ""]
                lines += [f"   {name}" for name in names] + [""]
        if other:
            lines += ["Constants", "---------", ""]
            for name in other:
                lines += [f".. autodata:: {name}", "   :no-value:", ""]
        if modname == "diffpriv_py":
            lines += ["R-parity aliases", "----------------", "", "The same objects under the R package's names.", ""]
            lines += [".. list-table::", "   :header-rows: 1", "", "   * - R name", "     - diffpriv_py object"]
            for alias in R_ALIASES:
                obj = getattr(diffpriv_py, alias, None)
                if obj is None:
                    continue
                target = seen.get(id(obj))
                ref = f":obj:`~{target}`" if target else f"``{getattr(obj, '__name__', alias)}``"
                lines += [f"   * - ``{alias}``", f"     - {ref}"]
            lines.append("")
        page = f"{number:02d}_{modname.replace('.', '_')}"
        _write_if_changed(out / f"{page}.rst", "\n".join(lines))
        pages.append(page)
    for stale in out.glob("*.rst"):
        if stale.stem not in pages:
            stale.unlink()
    return pages


def generate_example_pages() -> None:
    """Write a page with the description and source of each non-tutorial example script."""
    out = DOCS / "_gen_examples"
    scripts = sorted(p for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("tutorial_"))
    entries = []
    for script in scripts:
        module_doc = ""
        text = script.read_text(encoding="utf-8")
        try:
            import ast

            module_doc = ast.get_docstring(ast.parse(text)) or ""
        except SyntaxError:
            pass
        summary, _, details = module_doc.partition("\n")
        lines = [f"# `{script.name}`", "", summary.strip().replace("*", r"\*") or script.stem, ""]
        if details.strip():
            lines += ["```text", textwrap.dedent(details).strip("\n"), "```", ""]
        lines += [
            f"Run it with `python examples/{script.name}` (outputs go to `$DIFFPRIV_PY_OUTPUT`, default "
            "`examples/output/`; `DIFFPRIV_PY_QUICK=1` runs a shorter version, as CI does).",
            "",
            f"```{{literalinclude}} ../../examples/{script.name}",
            ":language: python",
            "```",
            "",
        ]
        _write_if_changed(out / f"{script.stem}.md", "\n".join(lines))
        entries.append(script.stem)
    index = ["# Example scripts", "", "Standalone scripts in `examples/`; CI runs every one of them.", ""]
    index += ["```{toctree}", ":maxdepth: 1", "", *entries, "```", ""]
    _write_if_changed(out / "index.md", "\n".join(index))
    for stale in out.glob("*.md"):
        if stale.stem != "index" and stale.stem not in entries:
            stale.unlink()


generate_api_pages()
generate_example_pages()


# ---- the table of contents: every page that exists, in reading order --------------------------------------------

TOC: list[tuple[str, list[str]]] = [
    ("Start here", ["getting_started", "concepts", "cli"]),
    ("Mechanisms and the sampler", ["mechanisms", "sensitivity_sampler", "bernstein", "security"]),
    ("Estimators", ["estimators", "pca", "erm", "kmeans", "linear_regression", "dpsgd", "sklearn"]),
    ("Statistics, accounting and scale", ["statistics", "groupby", "accuracy", "accounting", "scaling"]),
    ("Reproductions and tutorials", ["reproductions", "auto_examples/index", "_gen_examples/index"]),
    ("Reference", ["api/index", "r_parity", "comparison_groupby"]),
]
"""Pages in reading order; pages that do not exist (yet) are left out, unlisted pages go under "More"."""

TOC_MARKER = "<!-- toctree: generated by conf.py -->"

GENERATED_TOP_LEVEL = {"index", "sg_execution_times"}
"""Top-level pages that are not chapters: the index itself and sphinx-gallery's timing page (an orphan)."""


def _exists(page: str) -> bool:
    return page in ("auto_examples/index", "_gen_examples/index") or any(
        (DOCS / f"{page}{suffix}").exists() for suffix in (".md", ".rst")
    )


def toctree_markdown() -> str:
    """MyST toctrees for the index: the listed pages that exist, then any other top-level page."""
    listed = {page for _, pages in TOC for page in pages}
    extra = sorted(
        p.stem
        for p in [*DOCS.glob("*.md"), *DOCS.glob("*.rst")]
        if p.stem not in listed and p.stem not in GENERATED_TOP_LEVEL
    )
    blocks = []
    for caption, pages in [*TOC, ("More", extra)]:
        present = [page for page in pages if _exists(page)]
        if present:
            blocks += ["```{toctree}", ":maxdepth: 2", f":caption: {caption}", "", *present, "```", ""]
    return "\n".join(blocks)


def _insert_toctree(app: object, docname: str, source: list[str]) -> None:
    if docname == "index":
        source[0] = source[0].replace(TOC_MARKER, toctree_markdown())


def _reread_index(app: object, env: object, added: set, changed: set, removed: set) -> list[str]:
    # The index's toctree depends on which pages exist, so an incremental build must always re-read it.
    return ["index"]


def setup(app: object) -> None:
    app.connect("source-read", _insert_toctree)
    app.connect("env-get-outdated", _reread_index)
    app.connect("autodoc-process-docstring", _escape_docstring, priority=100)
    app.connect("autodoc-skip-member", _skip_scikit_learn_members)


def _skip_scikit_learn_members(app: object, what: str, name: str, obj: object, skip: bool, options: object) -> bool:
    """Leave out what the facades inherit from scikit-learn (``score``, ``set_*_request``): scikit-learn documents it,
    and its docstrings use scikit-learn's own Sphinx labels."""
    module = getattr(obj, "__module__", None) or ""
    qualname = getattr(obj, "__qualname__", "") or ""
    return skip or module.startswith("sklearn.") or qualname.startswith("RequestMethod")


# ---- docstrings: |x| is an absolute value, not an rST substitution -------------------------------------------

_SPAN = __import__("re").compile(r"(``.*?``|:\w+:`[^`]*`|`[^`]*`)")


def _escape_bars(line: str) -> str:
    """Escape ``|`` outside literals and roles, so ``|x − y|`` in prose renders instead of failing the build."""
    if line.lstrip().startswith(("|", "+-", "+=")):  # line blocks and grid tables
        return line
    parts = _SPAN.split(line)
    return "".join(part if i % 2 else part.replace("|", r"\|") for i, part in enumerate(parts))


def _escape_docstring(app: object, what: str, name: str, obj: object, options: object, lines: list[str]) -> None:
    in_literal = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if in_literal and stripped and not line.startswith((" ", "\t")):
            in_literal = False
        if not in_literal and "|" in line and not stripped.startswith((">>>", "...")):
            lines[i] = _escape_bars(line)
        if stripped.endswith("::") or stripped.startswith((".. math::", ".. code", ">>>")):
            in_literal = True
