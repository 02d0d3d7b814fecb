"""Compiled helpers the systems' kernels share."""
