#!/usr/bin/env bash
# Finds (or installs) what a self-hosted Temporal cluster on PostgreSQL needs on this machine, and
# prints where it is as KEY=VALUE lines on stdout (everything else goes to stderr):
#   TEMPORAL_SERVER_BIN   the `server` binary of go.temporal.io/server
#   TEMPORAL_SQL_TOOL     its schema tool (`temporal-sql-tool` in the admin-tools image)
#   TEMPORAL_SCHEMA_DIR   the PostgreSQL schema the tool applies (…/schema/postgresql/v12)
#   PG_BIN_DIR            PostgreSQL's initdb, pg_ctl and postgres
# Binaries are looked up in the environment (the variables above), then on PATH, then in
# $(go env GOPATH)/bin; missing ones are built with `go install` (about 8 minutes once, then cached).
# PostgreSQL is Debian's (`apt-get install postgresql`) when none is installed.
set -euo pipefail

TEMPORAL_SERVER_VERSION="${TEMPORAL_SERVER_VERSION:-v1.32.0}"
log() { echo "[cluster install] $*" >&2; }

need_go() {
  if ! command -v go >/dev/null; then
    log "installing Go (Debian's golang-go)"
    apt-get update -qq >&2 && apt-get install -y -qq golang-go >&2
  fi
  # Go 1.21+ fetches the toolchain the server's go.mod asks for through the module proxy.
  GOTOOLCHAIN=auto go version >/dev/null || {
    log "Go is too old to fetch a newer toolchain; install Go 1.21 or later from https://go.dev/dl/"
    exit 1
  }
}

# ensure_binary VAR NAME PACKAGE: the first of $VAR, NAME on PATH, and `go install`'s binary for
# PACKAGE in $(go env GOPATH)/bin (the last path element; `server` and `sql` are too generic a name
# to trust on PATH); otherwise `go install PACKAGE@$TEMPORAL_SERVER_VERSION` builds it.
ensure_binary() {
  local var="$1" name="$2" package="$3"
  local built="${package##*/}"
  if [ -n "${!var:-}" ] && [ -x "${!var}" ]; then
    echo "${!var}"
  elif command -v "$name" >/dev/null; then
    command -v "$name"
  elif command -v go >/dev/null && [ -x "$(go env GOPATH)/bin/$built" ]; then
    echo "$(go env GOPATH)/bin/$built"
  else
    need_go
    log "building $package@$TEMPORAL_SERVER_VERSION"
    GOTOOLCHAIN=auto go install "$package@$TEMPORAL_SERVER_VERSION" >&2
    echo "$(go env GOPATH)/bin/$built"
  fi
}

server_bin="$(ensure_binary TEMPORAL_SERVER_BIN temporal-server go.temporal.io/server/cmd/server)"
sql_tool="$(ensure_binary TEMPORAL_SQL_TOOL temporal-sql-tool go.temporal.io/server/cmd/tools/sql)"

# The schema files ship with the server's module source, which `go install` leaves in the module cache.
schema_dir="${TEMPORAL_SCHEMA_DIR:-}"
if [ -z "$schema_dir" ]; then
  need_go
  module_dir="$(go env GOMODCACHE)/go.temporal.io/server@$TEMPORAL_SERVER_VERSION"
  if [ ! -d "$module_dir" ]; then
    GOTOOLCHAIN=auto GOFLAGS=-mod=mod go mod download "go.temporal.io/server@$TEMPORAL_SERVER_VERSION" >&2
  fi
  schema_dir="$module_dir/schema/postgresql/v12"
fi
[ -d "$schema_dir/temporal/versioned" ] || {
  log "no PostgreSQL schema in $schema_dir"
  exit 1
}

pg_bin_dir="${PG_BIN_DIR:-}"
if [ -z "$pg_bin_dir" ]; then
  pg_bin_dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
fi
if [ -z "$pg_bin_dir" ] || [ ! -x "$pg_bin_dir/initdb" ]; then
  log "installing PostgreSQL (Debian's)"
  apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2
  pg_bin_dir="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
fi

echo "TEMPORAL_SERVER_BIN=$server_bin"
echo "TEMPORAL_SQL_TOOL=$sql_tool"
echo "TEMPORAL_SCHEMA_DIR=$schema_dir"
echo "PG_BIN_DIR=$pg_bin_dir"
