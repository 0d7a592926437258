"""What is built and shipped: the board bundle (manifest, install paths, ROMFS, flash), the wheel, the board type check, the pin map and the hardware kit."""
