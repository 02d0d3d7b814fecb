"""The generated table documentation matches the Pandera models."""
from pipeline.docs import DOC_PATH, render_tables_doc


def test_tables_doc_is_current():
    assert DOC_PATH.read_text() == render_tables_doc(), "run: python -m pipeline.docs"
