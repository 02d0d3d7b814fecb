"""The diprank command line."""
