"""The wheel carries the documentation: pyproject.toml says everything
else; this only adds the pages (host/pages.py SOURCES: docs/*.md and
hardware/README.md) to the built package as host/pages/<topic>.md, so a pip
or pipx user reads them with `bloomkeeper docs TOPIC`. In a clone they are
read where they are (nothing is copied into the sources)."""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def _sources():
    """host/pages.py's SOURCES, read without importing the package."""
    scope = {"__file__": os.path.join(ROOT, "host", "pages.py")}
    with open(os.path.join(ROOT, "host", "pages.py"), encoding="utf-8") as f:
        exec(compile(f.read(), "host/pages.py", "exec"), scope)
    return scope["SOURCES"]


class BuildWithPages(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the clone's pages
        out = os.path.join(self.build_lib, "host", "pages")
        os.makedirs(out, exist_ok=True)
        for topic, rel in _sources().items():
            shutil.copyfile(os.path.join(ROOT, rel), os.path.join(out, topic + ".md"))


setup(cmdclass={"build_py": BuildWithPages})
