"""Build of the optional compiled walk (``scrapy_detemplate/methods/_walk.pyx``).

Everything else is in ``pyproject.toml``.  The extension is optional: when it
cannot be built (no C compiler, say), the install goes on without it and
RTDM-TD removal uses its Python walk, with the same results.
"""

from __future__ import annotations

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """``build_ext`` that reports a failed build and goes on."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # any failure: install without the extension
            self._skipped(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # likewise
            self._skipped(exc)

    def _skipped(self, exc: Exception) -> None:
        print(f"scrapy-detemplate: the compiled walk was not built ({exc}); removal walks in Python", file=sys.stderr)


try:
    import lxml
    from Cython.Build import cythonize
except ImportError:  # building without the build requirements: no extension
    extensions = []
else:
    extensions = cythonize(
        [
            Extension(
                "scrapy_detemplate.methods._walk",
                ["scrapy_detemplate/methods/_walk.pyx"],
                include_dirs=lxml.get_include(),
                optional=True,
            )
        ],
        language_level=3,
        quiet=True,
    )

setup(ext_modules=extensions, cmdclass={"build_ext": OptionalBuildExt})
