"""The ring draws what the ring of b2e6f64 drew: pixel for pixel, over
random views, times, brightnesses and byte orders.

Why a comparison and not more pictures: splitting the ring's screens into
methods small enough that no call's frame lands on the heap (docs/ring.md)
must change no pixel of any screen, and a hand-picked set
of views would miss the corners (a flushed active seat in its dip, a
harvest count above 9, a score of 0, a warning behind a refusal). The old
ring is read from git's copy of that commit; in a checkout without that
history the test is skipped and says why."""

import importlib.util
import random
import subprocess
import sys

import pytest

import firmware.ring
from tests.kit.mpy_harness import REPO

BASE = "b2e6f64"


def _old_ring(tmp_path_factory):
    p = subprocess.run(["git", "-C", str(REPO), "show", BASE + ":firmware/ring.py"], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip("the ring of %s is not available: %s" % (BASE, p.stderr.strip()))
    text = p.stdout
    path = tmp_path_factory.mktemp("old_ring") / "old_ring.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("old_ring", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def old(tmp_path_factory):
    return _old_ring(tmp_path_factory)


def random_view(mod, rnd):
    """A view of any screen with every field at a value the app can set
    (and some it never sets, within the View's ranges)."""
    v = mod.View()
    v.mode = rnd.randrange(8)
    v.n = rnd.randint(2, 5)
    v.player = rnd.randrange(v.n)
    for f in range(5):
        v.values[f] = rnd.choice((0, 0, 1, 2, 3, 5, 8, 13, 20, 25))
        v.tokens[f] = rnd.randrange(7)
        v.flushed[f] = rnd.random() < 0.3
        v.busted[f] = rnd.random() < 0.3
        v.flowers[f] = rnd.randrange(11)
        v.winner[f] = rnd.random() < 0.3
        v.scores[f] = rnd.randint(-3, 60)
        v.counts[f] = rnd.choice((0, 0, 1, 2, 3, 4, 7, 12, 19))
        v.entered[f] = rnd.random() < 0.4
    v.extra_cost = rnd.randrange(2)
    v.upkeep = rnd.randrange(2)
    v.until_crash = rnd.choice((0, 1, 2, 3, 4, 5, 6, 7, 10, 99))
    v.bag = rnd.choice((0, 3, 5, 8, 9, 14, 15, 20, 21, 40, 99))
    v.trigger = rnd.randrange(3) if rnd.random() < 0.3 else 0
    v.pending = rnd.randrange(-1, 5) if rnd.random() < 0.3 else -1
    v.pending_count = rnd.randrange(14)
    v.last_round = rnd.randrange(2)
    v.ending = rnd.randrange(32)
    v.choice = rnd.randrange(7)
    v.options = rnd.choice((3, 30, 31, 1, 2, 5, 17, rnd.randrange(32)))
    v.sel = rnd.randrange(6)
    v.number = rnd.choice((0, 1, 4, 5, 9, 10, 24, 25, 37, 99, 130, rnd.randrange(200)))
    v.num_kind = rnd.randrange(3)
    v.unconfirmed = rnd.randrange(2)
    v.error_code = rnd.randint(1, 4)
    return v


def _copy(v, mod):
    w = mod.View()
    for k, x in v.__dict__.items():
        setattr(w, k, bytearray(x) if isinstance(x, bytearray) else (list(x) if isinstance(x, list) else x))
    return w


@pytest.mark.slow
@pytest.mark.parametrize("order", [None, (1, 0, 2, 3)], ids=["rgb", "grb"])
def test_the_ring_draws_the_old_rings_pixels(old, order):
    rnd = random.Random(20261201 if order is None else 7)
    views = 0
    for bright in (16, 32, 48, 69, 70, 128, 200, 255):
        new_ring = firmware.ring.Ring(24, order=order, bright=bright)
        old_ring = old.Ring(24, order=order, bright=bright)
        for _ in range(1500):
            v = random_view(firmware.ring, rnd)
            v.brightness = bright
            now = rnd.randrange(1 << 30)
            for name in ("error_at", "ack_at", "fault_at", "peek_at"):
                setattr(v, name, -1 if rnd.random() < 0.5 else (now - rnd.randrange(4000)) & 0x3FFFFFFF)
            v.peek = rnd.randrange(5) if v.peek_at >= 0 else -1
            w = _copy(v, old)
            for dt in (0, 130, 517):
                t = (now + dt) & 0x3FFFFFFF
                a = bytes(new_ring.render(v, t))
                b = bytes(old_ring.render(w, t))
                assert a == b, "mode %d choice %d at %d, brightness %d: %s" % (v.mode, v.choice, t, bright, v.__dict__)
            views += 1
    assert views == 8 * 1500
