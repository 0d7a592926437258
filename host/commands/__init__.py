"""The `bloomkeeper` subcommands, one module per command (host/cli.py lists
them): each has `register(subparsers)` and turns a user's mistake into one
line (host.errors.UserError); options.py holds the options several of them
share. The work itself lives in the subsystem packages beside this one
(board_sim, sync, fullrules, build, dashboard), which never import a command
(tests/house/test_import_boundaries.py)."""
