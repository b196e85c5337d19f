"""setuptools' build and egg-info directories in a temporary directory, removed at exit: a
`pip install <build>/client/python` leaves no file in the build tree. Everything else about the
package is in pyproject.toml."""

import atexit
import shutil
import tempfile

from setuptools import setup

work = tempfile.mkdtemp(prefix="collide-python-build-")
atexit.register(shutil.rmtree, work, True)
setup(options={"build": {"build_base": f"{work}/build"}, "egg_info": {"egg_base": work}})
