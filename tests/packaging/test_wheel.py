"""The package as a user builds and installs it. ``python -m build`` makes an sdist and, from it, a wheel for this
platform with the Rust traces fold compiled in; ``OTEL_AGENT_PURE_PYTHON=1 python -m build --wheel`` makes a
pure-Python wheel that installs anywhere. Each wheel, installed into a new virtual environment, runs ``otel-agent
serve``, stores one span exported by the OpenTelemetry SDK, and ``otel-agent runs`` reads it back — from a
directory outside the repository, so nothing is imported from the checkout — and ``otel-agent --version`` names
the fold in use.

Built once per test session (the Rust compile takes 1-2 minutes), from a copy of the repository's tracked files
into which the leftovers of an earlier build are planted (a ``build/lib`` with a module since deleted and a stale
copy newer than its source, an old ``otel_agent.egg-info``): what a wheel holds must be what the tree holds now.
The venvs see the test environment's site-packages for the dependencies (installing them from an index is what
``pip install`` does; not repeated here), but the package itself is the wheel's. Nothing is downloaded: the build runs
without isolation (``build``, ``setuptools-rust`` are in the test extra) and cargo offline (the crates were
fetched when the package was installed for the tests).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from otel_agent import __version__
from tests.conftest import free_port
from tests.tools import missing_tool

ROOT = Path(__file__).resolve().parents[2]
STALE_MODULE = "otel_agent/leftover_of_an_old_build.py"
# the view documents a wheel carries (setup.py copies them from docs/): what the MCP server's resources read
SHIPPED = {f"otel_agent/_docs/{n}": f"docs/{n}" for n in ("views-runs.md", "views-evidence.md", "schema.md")}
# the repository's files: tracked, and new ones not ignored (a change not yet committed builds as it will)
LS_FILES = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]

pytestmark = pytest.mark.timeout(900)


def clean_env(*, cargo: bool = False, **extra: str) -> dict[str, str]:
    """The environment without the worktree on PYTHONPATH; with cargo on PATH or without any."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "OTEL_AGENT_PURE_PYTHON")}
    if cargo:
        env["PATH"] = os.pathsep.join([env.get("PATH", ""), str(Path.home() / ".cargo" / "bin")])
    else:
        env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if ".cargo" not in p)
        env["CARGO"] = "/nonexistent/cargo"
    return {**env, **extra}


def tracked_package_files() -> set[str]:
    listed = subprocess.run(
        [*LS_FILES, "otel_agent"], cwd=ROOT, capture_output=True, check=True, timeout=60
    ).stdout.decode()
    return {name for name in listed.split("\0") if name and (ROOT / name).exists()}


@dataclass
class Built:
    sdist: Path
    native: Path
    pure: Path


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The sdist and both wheels, built once, from a copy of the tracked tree with an earlier build's leftovers."""
    cargo_env = clean_env(cargo=True)
    if shutil.which("cargo", path=cargo_env["PATH"]) is None:
        missing_tool("cargo", "no Rust toolchain (cargo) to build the native wheel: https://rustup.rs")
    work = tmp_path_factory.mktemp("wheels")
    src = work / "src"
    listed = subprocess.run(LS_FILES, cwd=ROOT, capture_output=True, check=True, timeout=60)
    for name in listed.stdout.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    # an earlier build's leftovers: a module deleted since, a stale copy of __init__ newer than its source, and
    # egg-info listing a file that no longer exists
    stale_lib = src / "build" / "lib" / "otel_agent"
    stale_lib.mkdir(parents=True)
    (src / "build" / "lib" / STALE_MODULE).write_text("raise ImportError('a stale file from an old build')\n")
    (stale_lib / "__init__.py").write_text('__version__ = "0.0.0-stale"\n')
    future = time.time() + 3600
    os.utime(stale_lib / "__init__.py", (future, future))
    (src / "otel_agent.egg-info").mkdir()
    (src / "otel_agent.egg-info" / "SOURCES.txt").write_text(f"{STALE_MODULE}\notel_agent/__init__.py\n")

    def build(*args: str, env: dict[str, str]) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "build", "--no-isolation", *args], cwd=src, env=env,
            capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])

    # the sdist, then the native wheel from it; cargo offline, its target directory kept between sessions
    target = Path.home() / ".cache" / "otel_agent" / "cargo-target"
    build(
        "--outdir",
        str(work / "native"),
        env={**cargo_env, "CARGO_TARGET_DIR": str(target), "CARGO_NET_OFFLINE": "true"},
    )
    # the pure wheel straight from the tree with the leftovers in it (no sdist in between)
    build("--wheel", "--outdir", str(work / "pure"), env=clean_env(cargo=True, OTEL_AGENT_PURE_PYTHON="1"))
    [sdist] = (work / "native").glob(f"otel_agent-{__version__}.tar.gz")
    [native] = (work / "native").glob(f"otel_agent-{__version__}-*.whl")
    [pure] = (work / "pure").glob(f"otel_agent-{__version__}-*.whl")
    return Built(sdist, native, pure)


def test_the_sdist_carries_the_rust_source_and_the_wheels_what_the_tree_holds(built: Built) -> None:
    with tarfile.open(built.sdist) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    for needed in ("native/Cargo.toml", "native/Cargo.lock", "native/src/lib.rs", "setup.py", "LICENSE"):
        assert needed in names, needed
    assert not any(n.startswith("native/target") for n in names)

    # the native wheel: CPython's stable ABI from 3.11 on, for this platform, with the compiled fold
    assert built.native.name.startswith(f"otel_agent-{__version__}-cp311-abi3-linux_"), built.native.name
    # the pure wheel: any Python 3, any platform, no compiled code
    assert built.pure.name == f"otel_agent-{__version__}-py3-none-any.whl"
    tracked = tracked_package_files()
    assert "otel_agent/store/schema/010_spans.sql" in tracked
    for wheel, compiled in ((built.native, 1), (built.pure, 0)):
        names = set(zipfile.ZipFile(wheel).namelist())
        package = {n for n in names if n.startswith("otel_agent/")}
        assert len([n for n in package if n.startswith("otel_agent/_native")]) == compiled, wheel.name
        assert tracked - package == set(), wheel.name  # every tracked file of the package travels
        # and nothing else but the compiled fold and the view documents, copied from docs/ as they are now
        assert {n for n in package - tracked if not n.startswith("otel_agent/_native")} == set(SHIPPED), wheel.name
        for name, source in SHIPPED.items():
            assert zipfile.ZipFile(wheel).read(name) == (ROOT / source).read_bytes(), (wheel.name, name)
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
        assert zipfile.ZipFile(wheel).read("otel_agent/__init__.py") == (ROOT / "otel_agent/__init__.py").read_bytes()


SEND = (
    "import sys\n"
    "from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter\n"
    "from opentelemetry.sdk.trace import TracerProvider\n"
    "from opentelemetry.sdk.trace.export import SpanExportResult, SpanProcessor\n"
    "e, results = OTLPSpanExporter(endpoint=sys.argv[1], insecure=True), []\n"
    "class Export(SpanProcessor):\n"
    "    def on_end(self, span): results.append(e.export([span]))\n"
    "p = TracerProvider()\n"
    "p.add_span_processor(Export())\n"
    "with p.get_tracer('wheel').start_as_current_span('invoke_agent from_the_wheel',"
    " attributes={'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'from_the_wheel'}):\n"
    "    pass\n"
    "p.shutdown()\n"
    "sys.exit(0 if results == [SpanExportResult.SUCCESS] else 1)  # acknowledged, or sent again\n"
)


@pytest.mark.parametrize("kind", ["native", "pure"])
def test_a_built_wheel_installs_serves_and_reads(built: Built, kind: str, tmp_path: Path) -> None:
    wheel = built.native if kind == "native" else built.pure
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python, otel_agent = str(venv / "bin" / "python"), str(venv / "bin" / "otel-agent")
    # the dependencies: this environment's site-packages, after the venv's own (a .pth line adds a directory
    # without running the .pth files in it, so an editable install of the checkout there stays out)
    own = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    paths = sysconfig.get_paths()
    Path(own, "_test_dependencies.pth").write_text(
        "\n".join(dict.fromkeys([paths["purelib"], paths["platlib"]])) + "\n"
    )
    installed = subprocess.run(
        [python, "-m", "pip", "install", "--no-deps", "--quiet", "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True, timeout=300, env=clean_env(),
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    where = subprocess.run(
        [python, "-c", "import otel_agent; print(otel_agent.__file__)"],
        capture_output=True, text=True, timeout=60, env=clean_env(), cwd=tmp_path,
    )  # fmt: skip
    assert where.stdout.strip().startswith(str(venv)), where

    version = subprocess.run([otel_agent, "--version"], capture_output=True, text=True, env=clean_env(), timeout=60)
    assert version.stdout.startswith(f"otel-agent {__version__}, "), version
    if kind == "native":
        assert version.stdout.strip().endswith("native (Rust) traces fold in use"), version.stdout
    else:
        assert "Python traces fold in use (the native one was not built" in version.stdout, version.stdout

    grpc_port, http_port = free_port(), free_port()
    serve = subprocess.Popen(
        [otel_agent, "serve", "--grpc-endpoint", f"127.0.0.1:{grpc_port}", "--http-endpoint", f"127.0.0.1:{http_port}"],
        cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        sent = None
        while True:  # until the receiver listens and acknowledges the span (sent once: its run may be listed later)
            if sent is None or sent.returncode != 0:
                sent = subprocess.run(
                    [python, "-c", SEND, f"127.0.0.1:{grpc_port}"], capture_output=True, text=True, timeout=60,
                    env=clean_env(),
                )  # fmt: skip
            runs = subprocess.run(
                [otel_agent, "runs", "--format", "json"], capture_output=True, text=True, timeout=60,
                env=clean_env(), cwd=tmp_path,
            )  # fmt: skip
            if runs.returncode == 0 and json.loads(runs.stdout):
                break
            assert time.monotonic() < deadline, (sent.stderr[-2000:], runs.stderr)
            time.sleep(1)
        [run] = json.loads(runs.stdout)
        assert (run["workflow"], run["status"], run["errors"]) == ("invoke_agent from_the_wheel", "ok", 0), run
    finally:
        serve.send_signal(signal.SIGTERM)
        output = serve.communicate(timeout=60)[0]
    assert serve.returncode == 0, output
    assert "Traceback" not in output

    # the MCP server of the installed package serves the view documents from the wheel (otel_agent/_docs/): the
    # documents' own text, not the list of columns it falls back to without them
    async def read_documents() -> dict[str, str]:
        server = StdioServerParameters(
            command=otel_agent, args=["mcp", "--db", str(tmp_path / "otel_agent.duckdb")], env=clean_env(),
            cwd=tmp_path,
        )  # fmt: skip
        async with Client(server) as client:
            return {
                name: (await client.read_resource(f"otel-agent://docs/{name}")).contents[0].text
                for name in ("views-runs", "views-evidence", "schema")
            }

    documents = anyio.run(read_documents)
    assert documents == {
        name: (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8")
        for name in ("views-runs", "views-evidence", "schema")
    }
    where = subprocess.run(
        [python, "-c", "from importlib import resources; print(resources.files('otel_agent') / '_docs')"],
        capture_output=True, text=True, timeout=60, env=clean_env(), cwd=tmp_path,
    )  # fmt: skip
    assert where.stdout.startswith(str(venv)), where
    assert Path(where.stdout.strip(), "views-runs.md").is_file(), where
