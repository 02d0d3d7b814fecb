"""docs/TABLES.md, generated from the Pandera models so the documentation matches the code."""

from __future__ import annotations

import sys
from pathlib import Path

from pipeline.ingest.validation import FEED_MODELS
from pipeline.systems.registry import SYSTEM_NAMES, system_class
from pipeline.warehouse.store import MONTHLY_FEEDS
from schemas.quality import Quality

DOC_PATH = Path(__file__).resolve().parents[1] / "docs" / "TABLES.md"


def model_section(title: str, location: str, model) -> str:
    """One table's markdown: where it lives and each column's type, nullability and meaning."""
    lines = [
        f"### {title}",
        "",
        f"`{location}` — {(model.__doc__ or '').strip()}",
        "",
        "| column | type | null | meaning |",
        "|---|---|---|---|",
    ]
    for name, column in model.to_schema().columns.items():
        if name.startswith("_"):
            continue
        meaning = (column.description or "").replace("|", "\\|")
        lines.append(f"| `{name}` | {column.dtype} | {'yes' if column.nullable else 'no'} | {meaning} |")
    return "\n".join(lines) + "\n"


def render_tables_doc() -> str:
    parts = [
        "# Tables",
        "",
        "Generated from the Pandera models in `schemas/` by `python -m pipeline.docs`; "
        "a test keeps it in step with the code.",
        "",
        "## Outputs",
        "",
    ]
    for name in SYSTEM_NAMES:
        cls = system_class(name)
        parts.append(
            model_section(
                f"{name} rankings", f"rankings/{name}/year=YYYY/month=MM/rankings.parquet", cls.rankings_model
            )
        )
        parts.append(
            model_section(f"{name} history", f"history/{name}/year=YYYY/month=MM/history.parquet", cls.history_model)
        )
        for extra, model in cls.extra_models.items():
            parts.append(model_section(f"{name} {extra}", f"{extra}/{name}/year=YYYY/month=MM/{extra}.parquet", model))
    parts.append(model_section("quality", "quality/year=YYYY/month=MM/quality.parquet", Quality))
    parts += ["## Validated feeds", ""]
    for feed, model in FEED_MODELS.items():
        # Games are stored one file per month of finished_on (pipeline.warehouse.store.MONTHLY_FEEDS).
        where = f"validated/{feed}/YYYY-MM.parquet" if feed in MONTHLY_FEEDS else f"validated/{feed}.parquet"
        parts.append(model_section(feed, where, model))
    return "\n".join(parts)


if __name__ == "__main__":
    DOC_PATH.write_text(render_tables_doc())
    print(f"wrote {DOC_PATH}", file=sys.stderr)
