"""Compiled helpers the systems' kernels share."""
from numba import njit

# Helpers that allocate nothing are compiled without numba's reference counting: otherwise every
# call that is not inlined pays an atomic increment and decrement per array argument, and small
# leaf functions inline into the hot loops.
plain_njit = njit(cache=True, _nrt=False)

# Kernels whose every divisor is non-zero by construction (counts of at least one result, sums
# of positive terms): numba's default error model tests each divisor to raise ZeroDivisionError,
# a compare and branch per division that DiWZ's evaluation paid on every row.
numpy_division_njit = njit(cache=True, error_model="numpy")
