# Bloomkeeper developer entry points. `make test` is what CI runs (.ci/run).
PY ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: install test run run-micropython bench firmware romfs clean

install: $(STAMP)

# Reinstall only when pyproject.toml changes. editable_mode=compat puts the repo
# root on the venv's sys.path, so packages created after install are importable too.
$(STAMP): pyproject.toml
	test -x $(VENV)/bin/python || $(PY) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --disable-pip-version-check -q \
		--config-settings editable_mode=compat -e '.[test]'
	touch $@

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

run: $(STAMP)
	$(VENV)/bin/bloomkeeper sim

# The same simulator with the firmware's .mpy bundle in the real MicroPython
# (the Unix port); why it is not the default: docs/sim-micropython.md.
run-micropython: $(STAMP)
	$(VENV)/bin/bloomkeeper sim --runtime micropython

bench: $(STAMP)
	$(VENV)/bin/python -m bench --readme

# Deployable bundles: build/firmware-micropython/ (bloomkeeper flash) and
# build/firmware-circuitpython/ (copy onto CIRCUITPY). hardware/README.md.
firmware: $(STAMP)
	$(VENV)/bin/python -m host.build.bundle

# The same MicroPython bundle as one ROMFS image, build/bloomkeeper.romfs, for
# a firmware with a ROMFS partition (bytecode runs from flash: hardware/README.md).
romfs: $(STAMP)
	$(VENV)/bin/python -m host.build.romfs

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
