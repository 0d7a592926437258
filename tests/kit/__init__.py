"""The test kit: the drivers and helpers that tests and bench/ share.

Test modules (tests/test_*.py) import from here and never from each other,
and bench/ imports only from here, so that a test file can be renamed,
split or deleted without breaking a benchmark. One way to drive a board in
CPython (app_helpers.Board), one inside MicroPython (game_driver, through
mpy_harness); the few others that remain say why in their docstrings.
"""
