"""The build's one piece of logic that pyproject.toml cannot say: whether to compile the Rust traces fold.

- ``OTEL_AGENT_PURE_PYTHON=1`` (or no ``cargo``, on PATH or as $CARGO): no Rust extension, a pure-Python wheel
  (``py3-none-any``) that installs anywhere; ``otel-agent --version`` then says the Python fold is in use.
- Otherwise ``otel_agent._native`` is compiled (setuptools-rust, release profile) into a wheel for this platform;
  a failed compile still gives a working package, pure Python (``optional=True``).

The view documents (``SHIPPED_DOCS``: docs/views-runs.md, docs/views-evidence.md, docs/schema.md) are copied into the
package as ``otel_agent/_docs/`` when it is built, so that an installed package serves them (the MCP server's
resources, ``otel_agent.read.schema.document``); in a checkout they are read from docs/.

Every build starts from fresh build directories: a ``build/`` or ``otel_agent.egg-info/`` left in the source tree
by an earlier build (of another version, or of files since removed) is neither read nor reused, so what a wheel
holds is what the tree holds now.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build import build
from setuptools.command.build_py import build_py

PURE_ENV = "OTEL_AGENT_PURE_PYTHON"
SHIPPED_DOCS = ("views-runs.md", "views-evidence.md", "schema.md")
"""The documents copied from docs/ into the package as otel_agent/_docs/ (MANIFEST.in puts them in the sdist)."""


def want_native() -> bool:
    if os.environ.get(PURE_ENV, "").strip().lower() not in ("", "0", "false", "no"):
        return False
    cargo = os.environ.get("CARGO")
    return bool(os.access(cargo, os.X_OK) if cargo else shutil.which("cargo"))


# egg_info writes SOURCES.txt and, when there is one from an earlier build, reads it back into the file list
# (setuptools does, without a version-control plugin): begin from none.
shutil.rmtree("otel_agent.egg-info", ignore_errors=True)
_scratch = tempfile.mkdtemp(prefix="otel-agent-build-")
atexit.register(shutil.rmtree, _scratch, True)


class FreshBuild(build):
    """``build/lib`` keeps files deleted from the tree and skips copying a source older than its stale copy:
    build in a new directory each time instead."""

    def initialize_options(self) -> None:
        super().initialize_options()
        self.build_base = _scratch


class BuildWithDocs(build_py):
    """The package's modules and data, and the view documents from docs/ as ``otel_agent/_docs/``."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "otel_agent" / "_docs"
        target.mkdir(parents=True, exist_ok=True)
        for name in SHIPPED_DOCS:
            self.copy_file(str(Path("docs") / name), str(target / name))


extras: dict = {}
if want_native():
    from setuptools_rust import Binding, RustExtension

    extras["rust_extensions"] = [
        RustExtension("otel_agent._native", path="native/Cargo.toml", binding=Binding.PyO3, optional=True, debug=False)
    ]
    # the extension uses the stable ABI of Python 3.11 (pyo3's abi3-py311): one wheel for CPython 3.11 and later
    extras["options"] = {"bdist_wheel": {"py_limited_api": "cp311"}}

setup(cmdclass={"build": FreshBuild, "build_py": BuildWithDocs}, **extras)
