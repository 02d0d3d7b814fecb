"""Compiled helpers the systems' kernels share."""

from numba import njit

# The shared helpers: numba's defaults, cached.
plain_njit = njit(cache=True)

# Kernels whose every divisor is non-zero by construction (counts of at least one result, sums
# of positive terms): numba's default error model tests each divisor to raise ZeroDivisionError,
# a compare and branch per division that DiWZ's evaluation paid on every row.
numpy_division_njit = njit(cache=True, error_model="numpy")
