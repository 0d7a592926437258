"""The test kit: the drivers and helpers that tests and bench/ share.

Test modules (tests/*/test_*.py) import from here and never from each other,
and bench/ imports only from here (tests/house/test_kit.py), so that a test file
can be renamed, split or deleted without breaking a benchmark.

Driving a board:

* in CPython, app_helpers.Board: SimHW, the Store on MemFS, App, and the
  device Link on request, wired as firmware/main.py wires them. The app
  tests, board_machine (the state machine) and bench/bench_link.py's fuzz
  all build their board with it;
* inside MicroPython, game_driver: the same board on the bundle's own
  modules, a whole button script played one gesture per call (run through
  mpy_harness, the one place that starts MicroPython).

The others that remain, and why:

* linkkit.StoreBoard (and hostile_board, built on it): the link's board
  interface over a Store with no App, so that host-side tests can serve
  records no button sequence makes (refused, doctored, colliding games);
* host/board_sim/board.SimBoard, the product's own simulator (its pty link,
  its flash directory, its clock): the tests of `bloomkeeper sim`, `serve`,
  `doctor` and the end-to-end syncs test that simulator itself, and
  dashboard_board runs it in a process of its own so that killing it is
  unplugging the board;
* MicroPython guests that need what game_driver does not give: alloc_guest
  (a RAM Store, so heap_lock catches the gesture's allocations and not the
  flash's), lfs_powercut (the Store on real littlefs, cut at every block
  operation), and the few test modules whose guest code builds an App
  inline to check one thing under heap_lock or a fault.

Firmware images: uf2_writer writes UF2 files after Microsoft's
specification, apart from the reader `flash --uf2` uses; frozen_sim has the
simulator answer as a board that runs a frozen image.
"""
