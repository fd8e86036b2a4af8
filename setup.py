"""Build of the optional compiled modules: every ``scrapy_detemplate/**/_*.pyx``.

Everything else is in ``pyproject.toml`` (and ``MANIFEST.in`` for the sdist).
Each extension is optional: when it cannot be built (no C compiler, no Cython,
no lxml headers), the install goes on without it and the package uses the
Python function it compiles (``rtdm``'s walk, the visible lines, the line
features...), with the same results.  Nothing here
runs at import time but the extension's declaration: Cython is only called
inside ``build_ext``, under the same guard as the C compiler, so building an
sdist or reading its metadata never needs it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

#: One extension per ``.pyx``, named after its path (``scrapy_detemplate/methods/_walk.pyx`` ->
#: ``scrapy_detemplate.methods._walk``); paths relative to this file, as setuptools wants them.
EXTENSIONS = [
    Extension(".".join(pyx.with_suffix("").parts), [pyx.as_posix()], optional=True)
    for pyx in sorted(Path("scrapy_detemplate").rglob("_*.pyx"))
]


class OptionalBuildExt(build_ext):
    """``build_ext`` that cythonizes at build time and reports a failed build, then goes on.

    The C files are compiled side by side, one per CPU, unless ``--parallel`` says otherwise (six
    files of 1-2 MB of C: ``pip install -e .[test]`` in an existing venv took 85 s with them compiled
    one after the other, 50 s side by side, on two cores)."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:
            self.parallel = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

    def run(self) -> None:
        try:
            self._cythonize()
        except Exception as exc:  # no Cython or no lxml headers: install without the extensions
            self._skipped("any", exc)
            return
        super().run()

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # this one is not built; the others still are
            self._skipped(ext.name, exc)

    def _cythonize(self) -> None:
        import lxml
        from Cython.Build import cythonize

        # The .pyx becomes a .c in place: the extensions stay the objects finalize_options prepared
        # (an editable build reads what it set on them).
        kept = []
        for ext in self.extensions:
            ext.include_dirs = [*ext.include_dirs, *lxml.get_include()]
            try:
                (compiled,) = cythonize([ext], language_level=3, quiet=True)
            except Exception as exc:  # this one is not built; the others still are
                self._skipped(ext.name, exc)
                continue
            ext.sources = list(compiled.sources)
            kept.append(ext)
        self.extensions[:] = kept

    def _skipped(self, name: str, exc: Exception) -> None:
        print(f"scrapy-detemplate: the compiled walk was not built ({name}: {exc}); "
              "the package uses its Python functions", file=sys.stderr)  # fmt: skip
        # An earlier build beside the source (an editable install's) would still load, built from
        # another .pyx than the one that failed now: removed, so the Python function runs as said.
        for ext in EXTENSIONS:
            if name in ("any", ext.name):
                folder, module = ext.name.rsplit(".", 1)
                for built in Path(*folder.split(".")).glob(f"{module}.*"):
                    if built.suffix in (".so", ".pyd"):
                        built.unlink()


setup(ext_modules=EXTENSIONS, cmdclass={"build_ext": OptionalBuildExt})
