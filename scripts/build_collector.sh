#!/usr/bin/env bash
# Build (or reuse) the OpenTelemetry Collector described by collector_config/builder-config.yaml.
#
# Usage: scripts/build_collector.sh [--force]
#
# The last line on stdout is the absolute path of the Collector binary; progress lines go to stderr, the
# builder's and go's own output to build.log in <hash>/ (below). Nothing is written into the repository:
#
#   ${OTEL_AGENT_COLLECTOR_CACHE:-$HOME/.cache/otel_agent/collector}/
#     tools/builder-<version>/builder     the builder, installed with `go install`
#     <first 16 hex of sha256(manifest)>/ one directory per manifest content
#       build/                            generated Go sources (main.go, components.go, go.mod ...)
#       build/otelcol-otel-agent          the binary
#       builder-config.yaml               copy of the manifest it was built from
#       build-info.txt                    when/how it was built, build seconds, size
#       build.log                         the builder's and go's output
#       .complete                         written last: the directory is only reused when present
#
# A cache hit (same manifest bytes, .complete present, binary runs) returns in well under a
# second. Any edit of the manifest changes the hash and so builds into a new directory;
# tests/collector_binary.py locates the binary with the same rule.
#
# Environment:
#   OTEL_AGENT_COLLECTOR_CACHE       cache root (default $HOME/.cache/otel_agent/collector)
#   OTEL_AGENT_COLLECTOR_BUILD_JOBS  `go build -p` (default 1: the build shares 2 cores with other work)
#   OTEL_AGENT_COLLECTOR_NICE        nice increment for the builder and go (default 10)
#   OTEL_AGENT_COLLECTOR_PROGRESS_S  seconds between progress lines during the long steps (default 15)
#   GOTOOLCHAIN                      default `local` (the Go on PATH, or /usr/local/go/bin/go)
#   GOPROXY, GOMODCACHE, GOCACHE     honoured as usual (module/build caches live outside the repo)
set -euo pipefail

force=0
case "${1:-}" in
  --force) force=1 ;;
  "") ;;
  -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
  *) echo "usage: $0 [--force]" >&2; exit 2 ;;
esac

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
manifest="$repo_root/collector_config/builder-config.yaml"
dist_name=otelcol-otel-agent

home=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
cache_root=${OTEL_AGENT_COLLECTOR_CACHE:-$home/.cache/otel_agent/collector}
hash=$(sha256sum "$manifest" | cut -c1-16)
out_dir="$cache_root/$hash"
binary="$out_dir/build/$dist_name"

log() { echo "build_collector: $*" >&2; }

# The build is long (empty Go caches: ~8 minutes of 2 idle cores; 40 minutes on a machine at load 15) and go's own
# output is ~500 `go: downloading` lines: that output goes to a log file, and a progress line every few seconds
# on stderr says which step runs, for how long, and how many modules were fetched so far. The count is of the
# module archives that arrived in Go's module cache since the step began: the builder fetches most of them with
# `go mod download`, which prints nothing, so counting `go: downloading` lines said 0 while 600 MB arrived.
ticker=""
module_archives() {  # how many module .zip files Go's module cache holds
  local cache
  cache="$(go env GOMODCACHE 2>/dev/null)/cache/download"
  if [[ -d "$cache" ]]; then find "$cache" -name '*.zip' -type f 2>/dev/null | wc -l; else echo 0; fi
}
start_progress() {  # start_progress WHAT [LOG]
  local what=$1 log_file=${2:-} began before
  began=$(date +%s)
  before=$(module_archives)
  ( while sleep "${OTEL_AGENT_COLLECTOR_PROGRESS_S:-15}"; do
      fetched=$(( $(module_archives) - before ))
      detail=", $fetched modules downloaded"
      if [[ -n "$log_file" && -f "$log_file" ]]; then
        # the builder's own log lines name its steps
        grep -q 'Getting go modules' "$log_file" && detail=", fetching modules: $fetched downloaded"
        grep -q 'Compiling' "$log_file" && detail=", compiling ($fetched modules downloaded)"
      fi
      log "$what: $(( $(date +%s) - began ))s so far$detail"
    done ) &
  ticker=$!
}
stop_progress() {
  if [[ -n "$ticker" ]]; then
    kill "$ticker" 2>/dev/null || true
    wait "$ticker" 2>/dev/null || true
    ticker=""
  fi
}

is_complete() {
  [[ -f "$out_dir/.complete" && -x "$binary" ]] && "$binary" --version >/dev/null 2>&1
}

if [[ $force -eq 0 ]] && is_complete; then
  log "cache hit ($out_dir)"
  echo "$binary"
  exit 0
fi

# --- toolchain --------------------------------------------------------------------------
if ! command -v go >/dev/null 2>&1; then
  if [[ -x /usr/local/go/bin/go ]]; then
    export PATH="$PATH:/usr/local/go/bin"
  else
    log "no 'go' on PATH and no /usr/local/go/bin/go; install Go >= 1.25 (https://go.dev/dl/)"
    exit 1
  fi
fi
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
go_version=$(go env GOVERSION)  # e.g. go1.25.1
go_v=${go_version#go}
go_major=${go_v%%.*}
go_minor=${go_v#*.}
go_minor=${go_minor%%[^0-9]*}
if ! (( go_major > 1 || (go_major == 1 && go_minor >= 25) )); then
  log "$go_version is too old: the Collector builder needs Go >= 1.25"
  exit 1
fi
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-p=${OTEL_AGENT_COLLECTOR_BUILD_JOBS:-1}"
nice_n=${OTEL_AGENT_COLLECTOR_NICE:-10}

# The builder version is pinned in the manifest itself (so it is part of the hash):
#   # builder: go.opentelemetry.io/collector/cmd/builder v0.161.0
builder_version=$(sed -n 's|^# builder: go.opentelemetry.io/collector/cmd/builder \(v[0-9][0-9.]*\)\s*$|\1|p' "$manifest" | head -n1)
if [[ -z "$builder_version" ]]; then
  log "manifest $manifest lacks the '# builder: go.opentelemetry.io/collector/cmd/builder vX.Y.Z' line"
  exit 1
fi

mkdir -p "$cache_root"
# One build at a time per cache root (parallel test runners, two shells ...).
exec 9>"$cache_root/.lock"
if ! flock -n 9; then
  log "another build holds $cache_root/.lock; waiting"
  flock 9
fi
if [[ $force -eq 0 ]] && is_complete; then   # built by whoever held the lock
  log "cache hit ($out_dir)"
  echo "$binary"
  exit 0
fi

tools_dir="$cache_root/tools/builder-$builder_version"
builder="$tools_dir/builder"
if [[ ! -x "$builder" ]]; then
  log "installing go.opentelemetry.io/collector/cmd/builder@$builder_version into $tools_dir"
  mkdir -p "$tools_dir"
  start_progress "installing the builder" "$cache_root/builder-install.log"
  if ! GOBIN="$tools_dir" nice -n "$nice_n" go install "go.opentelemetry.io/collector/cmd/builder@$builder_version" \
      >"$cache_root/builder-install.log" 2>&1; then
    stop_progress
    tail -n 30 "$cache_root/builder-install.log" >&2
    log "installing the builder failed (the last lines above; all of it in $cache_root/builder-install.log)"
    exit 1
  fi
  stop_progress
fi

# Build in a staging directory, then move it into place, so an interrupted build never
# looks like a finished one.
staging="$cache_root/.staging-$hash-$$"
rm -rf "$staging"
mkdir -p "$staging"
trap 'stop_progress; rm -rf "$staging"' EXIT
cp "$manifest" "$staging/builder-config.yaml"

log "building $dist_name from $manifest (hash $hash, $(go version | awk '{print $3}'), GOFLAGS=$GOFLAGS, nice $nice_n)"
start=$(date +%s)
# output_path in the manifest is relative (./build), so running from $staging keeps
# everything the builder generates under the cache directory.
build_log="$staging/build.log"
start_progress "building the Collector" "$build_log"
if ! (cd "$staging" && nice -n "$nice_n" "$builder" --config "$staging/builder-config.yaml" >"$build_log" 2>&1); then
  stop_progress
  tail -n 30 "$build_log" >&2
  cp "$build_log" "$cache_root/failed-build.log"
  log "the Collector build failed (the last lines above; all of it in $cache_root/failed-build.log)"
  exit 1
fi
stop_progress
secs=$(( $(date +%s) - start ))

"$staging/build/$dist_name" --version >>"$build_log" 2>&1
size=$(stat -c %s "$staging/build/$dist_name")
cat >"$staging/build-info.txt" <<EOF
manifest_sha256_prefix=$hash
built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
builder=go.opentelemetry.io/collector/cmd/builder@$builder_version
go=$(go version | awk '{print $3}')
goflags=$GOFLAGS
build_seconds=$secs
binary_bytes=$size
EOF

rm -rf "$out_dir"
mv "$staging" "$out_dir"
trap - EXIT
touch "$out_dir/.complete"
log "built in ${secs}s, binary $(( size / 1024 / 1024 )) MiB ($size bytes)"
echo "$binary"
