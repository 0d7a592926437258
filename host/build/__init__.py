"""Building what goes onto a board: bundle.py compiles the firmware's import
closure into .mpy bundles (`make firmware`, `bloomkeeper flash`)."""
