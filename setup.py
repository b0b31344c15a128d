"""The one step pyproject.toml cannot say: build libcalcroute.so with make (CALCROUTE_BUILD
names the build directory, default build/) and put it in the package as libcalcroute.so.0,
where the module looks first. The wheel is then platform-specific."""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        b = os.environ.get("CALCROUTE_BUILD", "build")
        lib = os.path.join(b, "libcalcroute.so")
        subprocess.run(["make", "-C", HERE, "B=" + b, lib], check=True)
        dest = os.path.join(self.build_lib, "calcroute", "libcalcroute.so.0")
        shutil.copyfile(os.path.join(HERE, lib), dest)
        os.chmod(dest, 0o755)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True


# setuptools' own build tree stays apart from make's objects.
setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution,
      options={"build": {"build_base": "build/python"}})
