"""Build glue that pyproject.toml cannot express: the Cython kernels.

The folder-to-package map lives in pyproject.toml. Every ``cython_ext/*.pyx`` becomes
``glasswork.cython_ext.<name>``, compiled as C++17 with global directives for speed. Set ``GLASSWORK_DEBUG=1`` to turn bounds, wrap-around and
initialisation checks back on (and build with ``-O0 -g``) when hunting a memory error.
Set ``GLASSWORK_EXT=name[,name]`` to build only some kernels while developing one of them.
Release builds on Linux are linked with ``-s`` (no symbols or debug information in the wheel).
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = Path(__file__).parent.resolve()

DEBUG = os.environ.get("GLASSWORK_DEBUG", "") not in ("", "0")
ONLY = {n for n in os.environ.get("GLASSWORK_EXT", "").split(",") if n}

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "nonecheck": DEBUG,
    "embedsignature": True,
}

LINK_ARGS: list[str] = []
if sys.platform == "win32":
    COMPILE_ARGS = ["/std:c++17"] + (["/Od", "/Zi"] if DEBUG else ["/O2"])
else:
    COMPILE_ARGS = ["-std=c++17"] + (["-O0", "-g"] if DEBUG else ["-O3"])
    # the CORELS search runs on std::thread (cython_ext/corels_threads.h)
    COMPILE_ARGS.append("-pthread")
    LINK_ARGS.append("-pthread")
    if not DEBUG and sys.platform.startswith("linux"):
        # Python's own CFLAGS carry -g: unstripped, the kernels weigh about 10 MB, stripped 0.5 MB
        LINK_ARGS.append("-s")
    if platform.machine().lower() in ("x86_64", "amd64"):
        # POPCNT has been in every x86-64 CPU since 2008; without the flag GCC emits a table lookup.
        COMPILE_ARGS.append("-mpopcnt")


def _extensions() -> list[Extension]:
    extensions = []
    for pyx in sorted((HERE / "cython_ext").glob("*.pyx")):
        if ONLY and pyx.stem not in ONLY:
            continue
        extensions.append(
            Extension(
                f"glasswork.cython_ext.{pyx.stem}",
                [str(pyx.relative_to(HERE))],
                language="c++",
                include_dirs=["cython_ext"],
                extra_compile_args=COMPILE_ARGS,
                extra_link_args=LINK_ARGS,
            )
        )
    return cythonize(
        extensions,
        compiler_directives=DIRECTIVES,
        include_path=["cython_ext"],
        quiet=True,
    )


setup(ext_modules=_extensions())
