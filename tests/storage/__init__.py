"""The board's games on flash (firmware/storage.py): the log, restores, a busy flash, power cuts on the simulated flash and on real littlefs."""
