"""Bloomkeeper test suite (CPython, plus MicroPython gates via tests/kit/mpy_harness.py)."""
