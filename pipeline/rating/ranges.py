"""Each system's range of months, and removing the outputs of months that have left it.

A system's range runs from the first month with valid data in its own feed (or the month after
the list it continues) to the latest month with valid data in any feed: exactly the months a run
from scratch writes. When deliveries
change (a game moved to another month, the last month corrected away, a first game moved later),
the months that leave the range lose their outputs here, so the warehouse keeps equal to a run
from scratch on the same raw folder.
"""

from __future__ import annotations

from pipeline.core.months import Month
from pipeline.rating.inputs import feed_bounds
from pipeline.rating.published import list_months
from pipeline.warehouse.store import Warehouse, is_local

MonthRange = tuple[Month, Month]


def system_range(bounds: dict[str, MonthRange | None], feed: str, listed: Month | None = None) -> MonthRange | None:
    """The months a system with this feed covers, given each feed's first and last month with data
    and the month of the list it continues (None: it starts from nothing)."""
    ends = [b[1] for b in bounds.values() if b is not None]
    if listed is not None:
        # A list starts the system the month after it, whatever its own feed held before.
        first = listed.next()
        return (first, max(ends)) if ends and max(ends) >= first else None
    own = bounds[feed]
    if own is None:
        return None
    return own[0], max(ends)


def system_ranges(warehouse: Warehouse, feeds: dict[str, str]) -> dict[str, MonthRange | None]:
    """The range of every system (name -> feed) from the warehouse's validated feeds and lists."""
    bounds = feed_bounds(warehouse)
    listed = list_months(warehouse)
    return {system: system_range(bounds, feed, listed.get(system)) for system, feed in feeds.items()}


def covered_months(warehouse: Warehouse, system: str, feed: str) -> MonthRange | None:
    """One system's range (see system_range)."""
    return system_ranges(warehouse, {system: feed})[system]


def output_kinds(extras: tuple[str, ...]) -> tuple[str, ...]:
    return ("rankings", "history", *extras)


def months_on_disk(warehouse: Warehouse, system: str, extras: tuple[str, ...]) -> set[Month]:
    """Every month a system has anything of: an output file, a checkpoint, a manifest entry."""
    months = set(warehouse.checkpoint_months(system))
    months.update(Month.parse(key) for key in warehouse.load_manifest(system))
    for kind in output_kinds(extras):
        months.update(warehouse.written_months(kind, system))
    return months


def months_outside(
    warehouse: Warehouse, system: str, extras: tuple[str, ...], covered: MonthRange | None
) -> list[Month]:
    """The months a system has something of that lie outside its range, oldest first."""
    on_disk = months_on_disk(warehouse, system, extras)
    if covered is None:
        return sorted(on_disk)
    first, last = covered
    return sorted(m for m in on_disk if m < first or m > last)


def forget_manifest_months(warehouse: Warehouse, name: str, months: list[Month]) -> None:
    """Drop these months from a manifest (a system's, or the quality tables')."""
    manifest = warehouse.load_manifest(name)
    kept = {key: value for key, value in manifest.items() if Month.parse(key) not in set(months)}
    if kept != manifest:
        warehouse.save_manifest(name, kept)


def remove_months(warehouse: Warehouse, system: str, extras: tuple[str, ...], months: list[Month]) -> None:
    """Delete a system's outputs, checkpoints and manifest entries of these months.

    The manifest goes first: a crash half-way leaves files that no manifest entry vouches for,
    which the next run treats as missing or removes again, never as current."""
    if not months:
        return
    forget_manifest_months(warehouse, system, months)
    for month in months:
        for kind in output_kinds(extras):
            remove_file(warehouse.output(kind, system, month))
        remove_file(warehouse.checkpoint(system, month))


def remove_file(path) -> None:
    """Delete an output file, and the month and year folders it leaves empty."""
    if not path.exists():
        return
    path.unlink()
    if is_local(path):
        # Empty month and year folders go too: a run from scratch has none.
        for folder in (path.parent, path.parent.parent):
            if folder.name.startswith(("year=", "month=")) and not any(folder.iterdir()):
                folder.rmdir()
