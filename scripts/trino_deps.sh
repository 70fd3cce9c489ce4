#!/usr/bin/env bash
# Installs what the Trino test of the archive recipe needs (tests/lifecycle/test_trino_recipe.py,
# docs/archive.md), at install time: Trino's server (the core tarball, 194 MB) and its Iceberg plugin (346 MB) from
# Maven Central, SHA-1 checked, unpacked into $OTEL_AGENT_TRINO_HOME (default ~/.cache/otel_agent/trino-476:
# outside the repository, so no build of the package ever sees it; kept between runs). Trino 476 needs Java 24+:
# the script prints the JAVA_HOME it found ($JAVA_HOME, else a JDK 24+ under /usr/lib/jvm) and fails without one.
# The test itself downloads nothing.
set -euo pipefail
TRINO_VERSION=476
HOME_DIR="${OTEL_AGENT_TRINO_HOME:-$HOME/.cache/otel_agent/trino-$TRINO_VERSION}"
MAVEN=https://repo1.maven.org/maven2/io/trino

java_major() { "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p'; }
java_home=""
for candidate in "${JAVA_HOME:-}" /usr/lib/jvm/*; do
  if [[ -n "$candidate" && -x "$candidate/bin/java" ]] && (( $(java_major "$candidate" || echo 0) >= 24 )); then
    java_home=$candidate
    break
  fi
done
if [[ -z "$java_home" ]]; then
  echo "trino deps: Trino $TRINO_VERSION needs Java 24 or later; none found (JAVA_HOME, /usr/lib/jvm/*)" >&2
  exit 1
fi

fetch() {  # artifact, file: into $HOME_DIR/downloads, SHA-1 checked
  local dir="$HOME_DIR/downloads"
  mkdir -p "$dir"
  if [[ ! -s "$dir/$2" ]]; then
    curl -fsSL --retry 3 -o "$dir/$2.part" "$MAVEN/$1/$TRINO_VERSION/$2"
    curl -fsSL --retry 3 -o "$dir/$2.sha1" "$MAVEN/$1/$TRINO_VERSION/$2.sha1"
    echo "$(cut -c1-40 "$dir/$2.sha1")  $dir/$2.part" | sha1sum -c --quiet -
    mv "$dir/$2.part" "$dir/$2"
    rm -f "$dir/$2.sha1"
  fi
}
server="$HOME_DIR/trino-server-$TRINO_VERSION"
if [[ ! -x "$server/bin/launcher" || ! -d "$server/plugin/iceberg" ]]; then
  fetch trino-server-core "trino-server-core-$TRINO_VERSION.tar.gz"
  fetch trino-iceberg "trino-iceberg-$TRINO_VERSION.zip"
  rm -rf "$server" "$server.partial"
  mkdir -p "$server.partial"
  tar -xzf "$HOME_DIR/downloads/trino-server-core-$TRINO_VERSION.tar.gz" -C "$server.partial" --strip-components=1
  python3 -m zipfile -e "$HOME_DIR/downloads/trino-iceberg-$TRINO_VERSION.zip" "$server.partial/plugin"
  mv "$server.partial/plugin/trino-iceberg-$TRINO_VERSION" "$server.partial/plugin/iceberg"
  chmod +x "$server.partial/bin/launcher" "$server.partial"/bin/linux-*/launcher
  mv "$server.partial" "$server"
  rm -rf "$HOME_DIR/downloads"  # 540 MB, unpacked now
fi
echo "trino deps: Trino $TRINO_VERSION in $server, Java $(java_major "$java_home") in $java_home"
echo "export OTEL_AGENT_TRINO_SERVER=$server JAVA_HOME=$java_home"
