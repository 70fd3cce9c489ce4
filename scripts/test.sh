#!/usr/bin/env bash
# The README's test line: install or check every prerequisite, build the Collector, run the suite.
#
# Usage: bash scripts/test.sh [pytest arguments...]     (no arguments: the whole suite)
#
# 1. Python >= 3.11: the active virtual environment; else ./.venv (created, or reused when present) when the Python
#    is a distribution's externally managed one (Debian's) or has no pip; else that Python itself (pyenv, a
#    container's own).
# 2. The package with its test extras (`pip install -e '.[test]'`).
# 3. System packages the tests drive: Debian's chromium (the console's browser tests), postgresql (the Iceberg
#    catalog test) and prometheus (tests/alerts scrapes the receiver's /metrics with it). As root they are installed with apt-get; otherwise one line names what is missing and how to
#    install it, and the script stops (exit 1) before running anything.
# 4. Go >= 1.25 for the Collector: the `go` on PATH or /usr/local/go/bin/go; as a last resort the Go toolchain
#    module (golang.org/toolchain, the same file `go` itself fetches for GOTOOLCHAIN) from the Go module proxy into
#    ~/.cache/otel_agent/go.
# 5. scripts/build_collector.sh (cached after the first build; a progress line every 15 s); then `npm ci` of the
#    Node scenario tests/vercel_ai/node (its committed lockfile).
# 6. python -m pytest -q [arguments].
#
# Environment: PYTHON (the interpreter to start from, default python3), OTEL_AGENT_GO_VERSION (the toolchain
# fetched in step 4, default 1.25.5).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
say() { echo "test.sh: $*" >&2; }
began=$(date +%s)
export PATH="$PATH:/usr/local/go/bin:$HOME/.cargo/bin"

# --- 1. Python ------------------------------------------------------------------------------------------------
python=${PYTHON:-python3}
# A distribution's Python (Debian's) is "externally managed" (PEP 668): pip refuses to install into it.
managed() { "$python" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'; }
if [[ -z "${VIRTUAL_ENV:-}" ]] && ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  say "needs Python >= 3.11 as '$python' (found: $("$python" --version 2>&1 || echo none)); set PYTHON=/path/to/python3.11"
  exit 1
fi
if [[ -z "${VIRTUAL_ENV:-}" ]] && { [[ -x .venv/bin/python ]] || managed || ! "$python" -m pip --version >/dev/null 2>&1; }; then
  if [[ ! -x .venv/bin/python ]]; then
    say "creating the virtual environment .venv"
    if ! "$python" -m venv .venv >/dev/null 2>&1; then
      rm -rf .venv
      if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
        say "installing python3-venv (apt-get)"
        apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
        "$python" -m venv .venv
      else
        say "'$python -m venv' fails: install python3-venv (sudo apt-get install python3-venv)"
        exit 1
      fi
    fi
  fi
  # shellcheck disable=SC1091
  . .venv/bin/activate
fi
[[ -n "${VIRTUAL_ENV:-}" ]] && python=python
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  say "the active environment has $("$python" --version 2>&1); needs Python >= 3.11"
  exit 1
fi

# --- 2. the package and its test extras -------------------------------------------------------------------------
say "installing the package with its test extras into $("$python" -c 'import sys; print(sys.prefix)') ($("$python" --version 2>&1))"
"$python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$python" -m pip install --quiet --disable-pip-version-check -e '.[test]'

# --- 3. system packages -----------------------------------------------------------------------------------------
missing=()
[[ -x /usr/bin/chromium ]] || missing+=(chromium)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
[[ -x /usr/bin/prometheus ]] || missing+=(prometheus)
if (( ${#missing[@]} )); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "installing ${missing[*]} (apt-get)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    say "missing ${missing[*]}: install with 'sudo apt-get install ${missing[*]}' (Debian), then run this again"
    exit 1
  fi
fi

# --- 4. Go for the Collector ------------------------------------------------------------------------------------
go_ok() {  # go_ok GO: is it >= 1.25?
  local v
  v=$("$1" env GOVERSION 2>/dev/null) || return 1
  v=${v#go}
  local major=${v%%.*} minor=${v#*.}
  minor=${minor%%[^0-9]*}
  (( major > 1 || (major == 1 && minor >= 25) ))
}
if ! { command -v go >/dev/null 2>&1 && go_ok go; }; then
  go_version=${OTEL_AGENT_GO_VERSION:-1.25.5}
  go_root="$HOME/.cache/otel_agent/go/go$go_version"
  if [[ ! -x "$go_root/bin/go" ]]; then
    arch=$(uname -m)
    case "$arch" in x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; esac
    url="https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-go$go_version.linux-$arch.zip"
    say "no Go >= 1.25 found: fetching go$go_version from the Go module proxy into $go_root"
    mkdir -p "$go_root.partial"
    "$python" - "$url" "$go_root.partial" <<'EOF'
import io, os, stat, sys, urllib.request, zipfile
url, dest = sys.argv[1], sys.argv[2]
prefix = "golang.org/toolchain@" + url.rsplit("/", 1)[1][: -len(".zip")] + "/"
with urllib.request.urlopen(url, timeout=600) as r:
    z = zipfile.ZipFile(io.BytesIO(r.read()))
for info in z.infolist():
    name = info.filename[len(prefix):] if info.filename.startswith(prefix) else info.filename
    path = os.path.join(dest, name)
    if info.is_dir():
        os.makedirs(path, exist_ok=True)
        continue
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(z.read(info))
    if (info.external_attr >> 16) & 0o111 or "/bin/" in "/" + name or "/pkg/tool/" in "/" + name:
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
EOF
    rm -rf "$go_root" && mv "$go_root.partial" "$go_root"
  fi
  export PATH="$go_root/bin:$PATH"
  export GOTOOLCHAIN=local
fi

# --- 5. the Collector -------------------------------------------------------------------------------------------
bash scripts/build_collector.sh >/dev/null

# --- 5b. the Node scenario's packages (tests/vercel_ai/node: the Vercel AI SDK and the OpenTelemetry JS SDK) ------
# `npm ci` from the committed lockfile (the npm registry; nothing is fetched at run time by the product). Without
# node/npm the Vercel tests skip on a developer's machine and fail in CI (tests/tools.py).
if command -v npm >/dev/null 2>&1; then
  if ! (cd tests/vercel_ai/node && npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
    say "npm ci in tests/vercel_ai/node failed"
    exit 1
  fi
else
  say "npm not found: the Vercel AI SDK scenario (tests/vercel_ai) will not run"
fi

# --- 6. the suite -----------------------------------------------------------------------------------------------
say "prerequisites ready in $(( $(date +%s) - began ))s; running python -m pytest -q $*"
exec "$python" -m pytest -q "$@"
