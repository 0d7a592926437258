"""tests/kit/lfs_flash.py, the Pico's flash for littlefs, inside the real Unix port.

Why: the bench's flash stalls and the power-cut campaign on littlefs stand
on this device counting every operation exactly and on a cut leaving the
bytes a real cut leaves. Checked here: the rp2 port's geometry and
littlefs settings are in force (4096-byte blocks, 352 of them; every read
a multiple of readsize 32 at a 32-byte offset, every program of whole
256-byte pages; mtime kept), every operation is counted once and logged
in order, and a cut at an operation stops it and every later one, and the
next boot mounts the surviving bytes with the file as it was before the
interrupted write or after it, never torn.
"""

import pytest

from tests.kit.mpy_harness import run_mpy

pytestmark = pytest.mark.mpy

SETUP = """
import os
from tests.kit.lfs_flash import Flash, OpLog, mount, unmount, READ, PROG, ERASE, BLOCK_SIZE, PAGE_SIZE
"""


def _out(r):
    return dict(line.split(" ", 1) for line in r.stdout.strip().splitlines())


def test_littlefs_on_the_rp2_geometry_counts_every_operation():
    code = """
f = Flash(path='flash.img')
log = OpLog()
f.log = log
fs = mount(f, '/flash')
st = os.statvfs('/flash')
print('geometry', st[0], st[2], f.ioctl(4, 0), f.ioctl(5, 0))
os.mkdir('/flash/bk')
with open('/flash/bk/1.log', 'wb') as h:
    h.write(b'x' * 600)
print('mtime', os.stat('/flash/bk/1.log')[8] > 0)
ops = log.ops
print('logged', len(ops) == f.ops, f.reads == log.count(READ), f.progs == log.count(PROG), f.erases == log.count(ERASE))
print('bytes', f.read_bytes == sum(o[3] for o in ops if o[0] == READ), f.prog_bytes == sum(o[3] for o in ops if o[0] == PROG))
print('reads', all(o[2] % 32 == 0 and o[3] % 32 == 0 for o in ops if o[0] == READ))
print('pages', all(o[2] % PAGE_SIZE == 0 and o[3] % PAGE_SIZE == 0 for o in ops if o[0] == PROG),
      f.pages == f.prog_bytes // PAGE_SIZE)
print('some', f.reads > 0, f.progs > 0, f.erases > 0)
print('stall', abs(log.stall_ms() - (45 * f.erases + 0.4 * f.pages)) < 1e-6)
unmount('/flash')
f.close()
"""
    out = _out(run_mpy(code, setup=SETUP, heapsize_kb=240))
    assert out["geometry"] == "4096 352 352 4096"
    assert out["mtime"] == "True"
    assert out["logged"] == "True True True True"
    assert out["bytes"] == "True True"
    assert out["reads"] == "True"
    assert out["pages"] == "True True"
    assert out["some"] == "True True True"
    assert out["stall"] == "True"


# One interrupted append, cut at each of its block operations in turn (and
# torn at each program): the next boot must mount and hold the file exactly
# as before the append or exactly as after it.
CUTS = """
def fresh(name):
    f = Flash(path=name)
    mount(f, '/flash')
    os.mkdir('/flash/bk')
    with open('/flash/bk/1.log', 'wb') as h:
        h.write(b'a' * 300)
    return f

probe = fresh('probe.img')
k0 = probe.ops
with open('/flash/bk/1.log', 'ab') as h:
    h.write(b'b' * 300)
span = probe.ops - k0
unmount('/flash')
probe.close()
old = b'a' * 300
new = old + b'b' * 300
seen = {'old': 0, 'new': 0}
for torn in (0, 100):
    for k in range(span):
        f = fresh('cut.img')
        at = f.ops + k
        f.cut_at(at, torn)
        try:
            with open('/flash/bk/1.log', 'ab') as h:
                h.write(b'b' * 300)
        except OSError as e:
            assert e.errno == 5, e
        assert f.off, k
        frozen = (f.ops, f.reads, f.progs, f.erases)
        assert f.ops == at, (f.ops, at)
        assert f.readblocks(0, bytearray(32), 0) == -5  # the power stays off
        assert (f.ops, f.reads, f.progs, f.erases) == frozen
        unmount('/flash')
        f.power_on()
        mount(f, '/flash', mkfs=False)
        got = open('/flash/bk/1.log', 'rb').read()
        assert got in (old, new), (k, torn, len(got))
        seen['old' if got == old else 'new'] += 1
        unmount('/flash')
        f.close()
print('span', span)
print('seen', seen['old'], seen['new'])
"""


def test_a_cut_at_any_operation_boots_on_the_bytes_that_landed():
    out = _out(run_mpy(CUTS, setup=SETUP, heapsize_kb=240, timeout=300))
    span = int(out["span"])
    assert span > 3  # an append is several operations: every one of them was cut
    old, new = map(int, out["seen"].split())
    assert old + new == 2 * span
    assert old > 0  # a cut before the commit keeps the old file


def test_the_ram_image_is_the_same_device():
    code = """
f = Flash(blocks=64)
mount(f, '/flash')
with open('/flash/x', 'wb') as h:
    h.write(b'hello')
unmount('/flash')
mount(f, '/flash', mkfs=False)
print('read', open('/flash/x').read(), os.statvfs('/flash')[2], f.mem[:4] != b'\\xff\\xff\\xff\\xff')
"""
    out = _out(run_mpy(code, setup=SETUP))
    assert out["read"] == "hello 64 True"
