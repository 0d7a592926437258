"""The documentation pages, wherever bloomkeeper was installed from.

Why: a message or a --help that names `docs/protocol.md` sends a wheel or
pipx user to a file they do not have. So the pages ship inside the package
(setup.py copies docs/*.md and hardware/README.md into host/pages/ when the
wheel is built) and every message names a page as `bloomkeeper docs TOPIC`,
which prints it the same way from a clone and from an install. In a clone
(host/pages/ is not there) the pages are read from the repository itself,
so there is one copy of each page in the sources.
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
SHIPPED = os.path.join(HERE, "pages")  # in a built wheel (setup.py)
CLONE = os.path.dirname(HERE)  # the repository root, in a clone

# topic -> its page in the repository (a clone); the wheel holds it as
# host/pages/<topic>.md. One list, read by setup.py as well.
SOURCES = {
    "architecture": "docs/architecture.md",
    "controls": "docs/controls.md",
    "dashboard": "docs/dashboard.md",
    "design": "docs/design.md",
    "game-record": "docs/game-record.md",
    "hardware": "hardware/README.md",
    "phones": "docs/phones.md",
    "protocol": "docs/protocol.md",
    "ring": "docs/ring.md",
    "rulings": "docs/rulings.md",
    "sim-micropython": "docs/sim-micropython.md",
    "simulation": "docs/simulation.md",
    "storage": "docs/storage.md",
}


def path(topic):
    """The file of page `topic` as installed (None if this install has none)."""
    if topic not in SOURCES:
        return None
    for p in (os.path.join(SHIPPED, topic + ".md"), os.path.join(CLONE, SOURCES[topic])):
        if os.path.isfile(p):
            return p
    return None


def ref(topic, section=None):
    """How a message names a page: the command that shows it (the same
    words in a clone and after pip or pipx install)."""
    assert topic in SOURCES, topic  # a message naming a page that does not exist is a bug
    return "`bloomkeeper docs %s`%s" % (topic, ', "%s"' % section if section else "")


def extra_hint(extra):
    """How to add the optional extra `extra` (pyproject's optional
    dependencies), in words that work for pip, pipx and a clone alike:
    pipx cannot install an extra into an installed app, it injects the
    packages; the packages are read from the installed metadata, so the
    hint names what pyproject.toml says."""
    dists = _extra_requirements(extra)
    inject = " ".join("'%s'" % d if any(c in d for c in "<>=!;") else d for d in dists) or extra
    return ("pip install 'bloomkeeper[%s]', or with pipx: pipx inject bloomkeeper %s (in a clone: make install)"
            % (extra, inject))


def _extra_requirements(extra):
    """The requirements (name and version range, no markers) of an extra."""
    try:
        from importlib.metadata import PackageNotFoundError, requires

        reqs = requires("bloomkeeper") or []
    except PackageNotFoundError:
        return []
    out = []
    for r in reqs:
        spec, _, marker = r.partition(";")
        if 'extra == "%s"' % extra in marker.replace("'", '"'):
            out.append(spec.strip().replace(" ", ""))
    return out
