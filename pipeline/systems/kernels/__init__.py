"""Compiled helpers the systems' kernels share."""
from numba import njit

# Helpers that allocate nothing are compiled without numba's reference counting: otherwise every
# call that is not inlined pays an atomic increment and decrement per array argument, and small
# leaf functions inline into the hot loops.
plain_njit = njit(cache=True, _nrt=False)
