#!/bin/sh
# Creates (or upgrades) Temporal's two PostgreSQL databases with the schema tool of the admin-tools
# image. Safe to run on every `docker compose up`: existing databases are kept and only upgraded.
# `npm run test:cluster` runs it too, with the tool and schema built from source (deploy/cluster/).
set -eu

TEMPORAL_SQL_TOOL="${TEMPORAL_SQL_TOOL:-temporal-sql-tool}"
TEMPORAL_SCHEMA_DIR="${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}"

# The password reaches the tool as SQL_PASSWORD in its environment, not in argv, which others can read.
sql() {
  "$TEMPORAL_SQL_TOOL" --plugin postgres12 --ep "$POSTGRES_HOST" -p "$POSTGRES_PORT" -u "$POSTGRES_USER" "$@"
}

for db in temporal temporal_visibility; do
  schema=temporal
  [ "$db" = temporal_visibility ] && schema=visibility
  sql --db "$db" create-database || echo "database $db exists"
  sql --db "$db" setup-schema -v 0.0 || echo "schema of $db exists"
  sql --db "$db" update-schema -d "$TEMPORAL_SCHEMA_DIR/$schema/versioned"
done
echo "Temporal schema is up to date"
