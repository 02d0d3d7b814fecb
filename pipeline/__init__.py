"""diprank: Diplomacy rating systems and the plain code behind the Dagster assets."""
