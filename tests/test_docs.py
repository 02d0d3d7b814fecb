"""The generated table documentation matches the Pandera models."""

from pipeline.docs import DOC_PATH, render_tables_doc


def test_tables_doc_is_current():
    assert DOC_PATH.read_text() == render_tables_doc(), "run: python -m pipeline.docs"


def test_readme_lists_every_setting():
    """The README's configuration table names every variable Settings reads."""
    from pipeline import settings
    from tests.support import REPO

    readme = (REPO / "README.md").read_text()
    variables = {value for name, value in vars(settings).items() if name.startswith("ENV_")}
    assert variables and {v for v in variables if f"`{v}`" not in readme} == set()
