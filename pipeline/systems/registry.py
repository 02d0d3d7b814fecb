"""Every rating system by name, built from the settings. A new system is one module plus one line here."""

from __future__ import annotations

import importlib
import json
from typing import Any

from pipeline.settings import Settings
from pipeline.systems.base import RatingSystem

# name -> (module:class, settings fields passed as constructor keywords)
SYSTEMS: dict[str, tuple[str, dict[str, str]]] = {
    "dip_pouch": ("pipeline.systems.dip_pouch.rules:DipPouch", {"cutoff_year": "dip_pouch_cutoff_year"}),
    "club": ("pipeline.systems.club.rules:ClubRating", {}),
    "eagle": (
        "pipeline.systems.eagle.rules:EaglePoints",
        {"variants": "eagle_variants", "positions": "eagle_positions"},
    ),
    "diwz": ("pipeline.systems.diwz.rules:DiWZ", {"newcomers": "diwz_newcomers"}),
    "ghost": ("pipeline.systems.ghost.rules:GhostRating", {}),
}

SYSTEM_NAMES = tuple(SYSTEMS)


def system_class(name: str) -> type[Any]:
    """The class implementing a system."""
    module, _, cls = SYSTEMS[name][0].partition(":")
    return getattr(importlib.import_module(module), cls)


def system_options(name: str, settings: Settings) -> dict:
    """Constructor keywords of a system taken from the settings."""
    return {arg: getattr(settings, field) for arg, field in SYSTEMS[name][1].items()}


def build_system(name: str, settings: Settings) -> RatingSystem:
    """A configured instance of the named system."""
    return system_class(name)(**system_options(name, settings))


def config_key(name: str, settings: Settings) -> str:
    """Stable text of a system's configuration; checkpoints made under another one are not reused."""
    options = {k: list(v) if isinstance(v, tuple) else v for k, v in system_options(name, settings).items()}
    return json.dumps({"system": name, **options}, sort_keys=True)
