# Bloomkeeper developer entry points. `make test` is what CI runs (.ci/run).
PY ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

# The Python floor: requires-python in pyproject.toml (python-floor checks it).
FLOOR := $(shell sed -n 's/^requires-python = ">=\([0-9.]*\)".*/\1/p' pyproject.toml)

.PHONY: install test test-fast run run-micropython bench chip-bench chip-bench-cp firmware uf2 romfs python-floor clean

install: $(STAMP)

# Reinstall only when pyproject.toml or the pins change. editable_mode=compat puts
# the repo root on the venv's sys.path, so packages created after install are
# importable too. pyproject.toml states ranges; constraints.txt pins the exact set.
$(STAMP): pyproject.toml constraints.txt
	test -x $(VENV)/bin/python || $(PY) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --disable-pip-version-check -q -c constraints.txt \
		--config-settings editable_mode=compat -e '.[test]'
	touch $@

# Does the pinned set install on the oldest Python that requires-python allows?
# Wheels only, nothing installed (pip resolves for that Python version).
python-floor: $(STAMP)
	$(VENV)/bin/python -m pip install --disable-pip-version-check -q --dry-run --ignore-installed \
		--target $$(mktemp -d) --python-version $(FLOOR) --only-binary=:all: -c constraints.txt '.[test]'
	@echo "python-floor: the pinned set resolves on Python $(FLOOR)"

# rp2040js (bench/chip's pin) runs the buttons' PIO program in tests/board/test_keys_pio.py.
test: $(STAMP) bench/chip/node_modules/rp2040js/package.json
	$(VENV)/bin/python -m pytest -q

# The edit-run loop: every test not marked slow, browser, tmux or mpy (the
# markers: pyproject.toml), under a minute on the 2-core machine. It is not
# what CI runs: `make test` is.
FAST := not slow and not browser and not tmux and not mpy
test-fast: $(STAMP)
	$(VENV)/bin/python -m pytest -q -m "$(FAST)"

run: $(STAMP)
	$(VENV)/bin/bloomkeeper sim

# The same simulator with the firmware's .mpy bundle in the real MicroPython
# (the Unix port); why it is not the default: docs/sim-micropython.md.
run-micropython: $(STAMP)
	$(VENV)/bin/bloomkeeper sim --runtime micropython

bench: $(STAMP)
	$(VENV)/bin/python -m bench --readme

# The chip bench: whole games on an emulated RP2040 (rp2040js, pinned in
# bench/chip/package-lock.json) running MicroPython images from outside the
# registries, so not part of `make test`: docs/chip-bench.md says where to
# fetch them (by repository and commit) and what each figure includes.
# UF2 = the stock MicroPython v1.28.0 RPI_PICO image (the bundle on littlefs);
# FROZEN_UF2 = a frozen build (`make uf2`), left out when empty; FROZEN_SRC =
# the tree it was built from (a directory or REPO@REV), for the CPython reference;
# CHIP_HEAP = bisections of the smallest heap per title (-1: no heap runs).
CHIP_CACHE ?= $(HOME)/.cache/bk-chip
UF2 ?= $(CHIP_CACHE)/RPI_PICO-20260406-v1.28.0.uf2
FROZEN_UF2 ?=
FROZEN_SRC ?=
CHIP_HEAP ?= 2
bench/chip/node_modules/rp2040js/package.json: bench/chip/package-lock.json
	cd bench/chip && npm ci --no-audit --no-fund
	touch $@

chip-bench: $(STAMP) bench/chip/node_modules/rp2040js/package.json
	mkdir -p build
	BK_CHIP_CACHE=$(CHIP_CACHE) $(VENV)/bin/python -m bench.bench_chip --uf2 $(UF2) $(if $(FROZEN_UF2),--frozen-uf2 $(FROZEN_UF2)) $(if $(FROZEN_SRC),--frozen-src $(FROZEN_SRC)) \
		--heap $(CHIP_HEAP) --json build/chip-bench.json

# The same on official CircuitPython UF2s for the Pico (9.x and 10.x: CP_UF2,
# several paths with spaces between; default: 9.2.8 and 10.0.0 in CHIP_CACHE),
# the CircuitPython bundle on the CIRCUITPY drive (needs mtools: apt-get
# install mtools); CP_PACE = tap/gap ms of the games; CP_HEAP=1 adds a heap run
# per title. Not part of `make test`.
CP_UF2 ?=
CP_FLASH ?= typical,max
CP_PACE ?= 80/220,45/70
CP_HEAP ?= 1
chip-bench-cp: $(STAMP) bench/chip/node_modules/rp2040js/package.json
	mkdir -p build
	BK_CHIP_CACHE=$(CHIP_CACHE) $(VENV)/bin/python -m bench.bench_chip_cp $(foreach u,$(CP_UF2),--uf2 $(u)) --flash "$(CP_FLASH)" --pace "$(CP_PACE)" \
		$(if $(filter 1,$(CP_HEAP)),--heap) --json build/chip-bench-cp.json

# Deployable bundles: build/firmware-micropython/ (bloomkeeper flash) and
# build/firmware-circuitpython/ (copy onto CIRCUITPY). hardware/README.md.
# Outside a clone, `bloomkeeper firmware` builds the same into the user's cache.
# CP_MPY_CROSS = CircuitPython's own mpy-cross (built from adafruit/circuitpython's
# source at a release tag, outside the repo: hardware/README.md): the CircuitPython
# bundle ships .mpy files instead of source; left empty, it is source, as it says.
CP_MPY_CROSS ?=
firmware: $(STAMP)
	$(VENV)/bin/python -m host.build.bundle --out build $(if $(CP_MPY_CROSS),--cp-mpy-cross $(CP_MPY_CROSS))

# One MicroPython firmware image with the bundle, the entry and the pin map
# frozen in: build/uf2/bloomkeeper-<version>-RPI_PICO.uf2, from a MicroPython
# v1.28.0 source tree with its submodules (MICROPY_DIR; hardware/README.md,
# "Build the UF2"). Not part of `make test`: the tree comes from outside the
# package registries.
uf2: $(STAMP)
	$(VENV)/bin/python -m host.build.uf2 --out build/uf2 $(if $(MICROPY_DIR),--micropython $(MICROPY_DIR)) $(if $(BOARD),--board $(BOARD))

# The same MicroPython bundle as one ROMFS image, build/bloomkeeper.romfs, for
# a firmware with a ROMFS partition (bytecode runs from flash: hardware/README.md).
romfs: $(STAMP)
	$(VENV)/bin/python -m host.build.romfs --build build --out build/bloomkeeper.romfs

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
