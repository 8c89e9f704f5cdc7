#!/usr/bin/env bash
# Finds (or builds) the OpenTelemetry Collector the tracing tests export spans to, and prints where it
# is as a KEY=VALUE line on stdout (everything else goes to stderr):
#   YIEM_OTELCOL_BIN   a Collector with the OTLP receiver and the file and debug exporters
# Looked up in the environment, then in $(go env GOPATH)/bin; otherwise built from deploy/otel/collector
# (the Collector's own components at one release, what `ocb` would generate for them). Without a
# Go build cache that is about 2 minutes of CPU (14 minutes of wall clock measured on the 2 busy shared
# cores); with one, seconds. The core distribution (otelcorecol) is not served as a Go module and has
# no file exporter.
set -euo pipefail
cd "$(dirname "$0")"
log() { echo "[otel install] $*" >&2; }

if [ -n "${YIEM_OTELCOL_BIN:-}" ] && [ -x "$YIEM_OTELCOL_BIN" ]; then
  bin="$YIEM_OTELCOL_BIN"
else
  if ! command -v go >/dev/null; then
    log "installing Go (Debian's golang-go)"
    apt-get update -qq >&2 && apt-get install -y -qq golang-go >&2
  fi
  bin="$(go env GOPATH)/bin/yiem-otelcol"
  # Rebuilt when the module changes, so a new release of the components is picked up.
  stamp="$bin.$(cat collector/go.sum collector/main.go | sha256sum | cut -c1-16)"
  if [ ! -x "$bin" ] || [ ! -e "$stamp" ]; then
    log "building the Collector from deploy/otel/collector"
    mkdir -p "$(dirname "$bin")"
    (cd collector && GOTOOLCHAIN=auto go build -o "$bin" .) >&2
    rm -f "$bin".*
    touch "$stamp"
  fi
fi
echo "YIEM_OTELCOL_BIN=$bin"
