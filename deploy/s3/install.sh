#!/usr/bin/env bash
# Finds (or installs) the S3-compatible server the tests run the S3 payload store against, and prints
# where it is as a KEY=VALUE line on stdout (everything else goes to stderr):
#   YIEM_S3_SERVER_BIN   gofakes3's server (github.com/johannesboyne/gofakes3/cmd/gofakes3)
# Looked up in the environment, then on PATH, then in $(go env GOPATH)/bin; otherwise built with
# `go install` (well under a minute). SeaweedFS's module cannot be `go install`ed (its go.mod has
# replace directives), so the tests use gofakes3, a small S3 server speaking the same API.
set -euo pipefail

GOFAKES3_VERSION="${GOFAKES3_VERSION:-v1.2.0}"
log() { echo "[s3 install] $*" >&2; }

if [ -n "${YIEM_S3_SERVER_BIN:-}" ] && [ -x "$YIEM_S3_SERVER_BIN" ]; then
  bin="$YIEM_S3_SERVER_BIN"
elif command -v gofakes3 >/dev/null; then
  bin="$(command -v gofakes3)"
else
  if ! command -v go >/dev/null; then
    log "installing Go (Debian's golang-go)"
    apt-get update -qq >&2 && apt-get install -y -qq golang-go >&2
  fi
  bin="$(go env GOPATH)/bin/gofakes3"
  if [ ! -x "$bin" ]; then
    log "building github.com/johannesboyne/gofakes3/cmd/gofakes3@$GOFAKES3_VERSION"
    GOTOOLCHAIN=auto go install "github.com/johannesboyne/gofakes3/cmd/gofakes3@$GOFAKES3_VERSION" >&2
  fi
fi
echo "YIEM_S3_SERVER_BIN=$bin"
