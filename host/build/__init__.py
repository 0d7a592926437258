"""Building what goes onto a board: bundle.py compiles the modules that
manifest.py lists (the one list of what ships) into .mpy bundles (`make
firmware`, `bloomkeeper flash`)."""
