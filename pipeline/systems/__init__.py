"""The rating systems: plain code, no Dagster. Each module exposes one RatingSystem."""
from pipeline.systems.kernel_cache import use_fresh_kernel_cache

# Before any module of the package compiles a kernel (each decorator picks its cache locator).
use_fresh_kernel_cache()
