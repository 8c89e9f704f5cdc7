#!/bin/sh
# Creates (or upgrades) Temporal's two PostgreSQL databases with the schema tool of the admin-tools
# image. Safe to run on every `docker compose up`: existing databases are kept and only upgraded.
set -eu

# The password reaches the tool as SQL_PASSWORD in its environment, not in argv, which others can read.
sql() {
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_HOST" -p "$POSTGRES_PORT" -u "$POSTGRES_USER" "$@"
}

for db in temporal temporal_visibility; do
  schema=temporal
  [ "$db" = temporal_visibility ] && schema=visibility
  sql --db "$db" create-database || echo "database $db exists"
  sql --db "$db" setup-schema -v 0.0 || echo "schema of $db exists"
  sql --db "$db" update-schema -d "/etc/temporal/schema/postgresql/v12/$schema/versioned"
done
echo "Temporal schema is up to date"
