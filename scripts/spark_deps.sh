#!/usr/bin/env bash
# Installs what the Spark test of the archive recipe needs (tests/spark, docs/archive.md), at install time:
# pyspark from PyPI and two jars from Maven Central into $OTEL_AGENT_SPARK_JARS (default build/spark-jars).
# Java 17+ must already be on the machine. The test never downloads anything.
set -euo pipefail
cd "$(dirname "$0")/.."
PYSPARK_VERSION=4.1.4        # Iceberg publishes its Spark runtime for Spark 4.0 and 4.1 only (none for 4.2+)
ICEBERG_VERSION=1.12.0
SPARK_LINE=4.1
SQLITE_JDBC_VERSION=3.54.1.0 # the JDBC driver of the default SQLite Iceberg catalog
JARS="${OTEL_AGENT_SPARK_JARS:-build/spark-jars}"
MAVEN=https://repo1.maven.org/maven2

python3 -m pip install --quiet "pyspark==${PYSPARK_VERSION}"
mkdir -p "$JARS"
fetch() {  # group path, artifact, version
  local jar="$2-$3.jar"
  if [ ! -s "$JARS/$jar" ]; then
    curl -fsSL --retry 3 -o "$JARS/$jar.part" "$MAVEN/$1/$2/$3/$jar"
    curl -fsSL --retry 3 -o "$JARS/$jar.sha1" "$MAVEN/$1/$2/$3/$jar.sha1"
    echo "$(cut -c1-40 "$JARS/$jar.sha1")  $JARS/$jar.part" | sha1sum -c --quiet -
    mv "$JARS/$jar.part" "$JARS/$jar"
    rm -f "$JARS/$jar.sha1"
  fi
}
fetch org/apache/iceberg "iceberg-spark-runtime-${SPARK_LINE}_2.13" "$ICEBERG_VERSION"
fetch org/xerial sqlite-jdbc "$SQLITE_JDBC_VERSION"
echo "spark deps: pyspark ${PYSPARK_VERSION}, jars in $JARS"
