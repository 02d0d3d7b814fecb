"""Compiled helpers the systems' kernels share.

A habit of every kernel: a function called once per row or game takes arrays and numbers, or
reads the fields of a named tuple into locals on its first line, never `bundle.field` deep in a
loop or after a branch. Each such read is a new reference to the array, counted up and down by
numba's runtime where its optimiser cannot pair them, and those counts cost more than the rule's
arithmetic (benchmarks/RESULTS.md, the kernel tables).
"""

from numba import njit

# The shared helpers: numba's defaults, cached.
plain_njit = njit(cache=True)

# Kernels whose every divisor is non-zero by construction (counts of at least one result, sums
# of positive terms): numba's default error model tests each divisor to raise ZeroDivisionError,
# a compare and branch per division that DiWZ's evaluation paid on every row.
numpy_division_njit = njit(cache=True, error_model="numpy")
