"""Benchmarks: `python -m bench` prints figures (tests never assert wall-clock times)."""
