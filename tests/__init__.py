"""Bloomkeeper test suite (CPython, plus MicroPython gates via tests/mpy_harness.py)."""
