"""Build of the optional compiled walk (``scrapy_detemplate/methods/_walk.pyx``).

Everything else is in ``pyproject.toml`` (and ``MANIFEST.in`` for the sdist).
The extension is optional: when it cannot be built (no C compiler, no Cython,
no lxml headers, the ``.pyx`` missing), the install goes on without it and
RTDM-TD removal uses its Python walk, with the same results.  Nothing here
runs at import time but the extension's declaration: Cython is only called
inside ``build_ext``, under the same guard as the C compiler, so building an
sdist or reading its metadata never needs it.
"""

from __future__ import annotations

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

WALK = Extension("scrapy_detemplate.methods._walk", ["scrapy_detemplate/methods/_walk.pyx"], optional=True)


class OptionalBuildExt(build_ext):
    """``build_ext`` that cythonizes at build time and reports a failed build, then goes on."""

    def run(self) -> None:
        try:
            self._cythonize()
            super().run()
        except Exception as exc:  # any failure: install without the extension
            self._skipped(exc)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # likewise
            self._skipped(exc)

    def _cythonize(self) -> None:
        import lxml
        from Cython.Build import cythonize

        # The .pyx becomes a .c in place: the extensions stay the objects finalize_options prepared
        # (an editable build reads what it set on them).
        for ext in self.extensions:
            ext.include_dirs = [*ext.include_dirs, *lxml.get_include()]
            (compiled,) = cythonize([ext], language_level=3, quiet=True)
            ext.sources = list(compiled.sources)

    def _skipped(self, exc: Exception) -> None:
        print(f"scrapy-detemplate: the compiled walk was not built ({exc}); removal walks in Python", file=sys.stderr)


setup(ext_modules=[WALK], cmdclass={"build_ext": OptionalBuildExt})
