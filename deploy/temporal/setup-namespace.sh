#!/bin/sh
# Creates the namespace yiem uses and the search attributes its workflows write (the same ones
# `yiem server` registers on the dev server: YIEM_SEARCH_ATTRIBUTES in src/infrastructure/server/devServer.ts).
# `npm run test:cluster` runs it too, with the CLI in TEMPORAL_CLI.
set -eu

temporal() { "${TEMPORAL_CLI:-temporal}" "$@"; }

until temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do sleep 1; done

temporal operator namespace describe --address "$TEMPORAL_ADDRESS" -n "$TEMPORAL_NAMESPACE" >/dev/null 2>&1 ||
  temporal operator namespace create --address "$TEMPORAL_ADDRESS" -n "$TEMPORAL_NAMESPACE" --retention "$TEMPORAL_RETENTION"

# Right after the namespace is created the server may not know it yet everywhere: retry for a while.
attempts=0
until temporal operator search-attribute list --address "$TEMPORAL_ADDRESS" -n "$TEMPORAL_NAMESPACE" 2>/dev/null |
  grep -q YiemAgent; do
  temporal operator search-attribute create --address "$TEMPORAL_ADDRESS" -n "$TEMPORAL_NAMESPACE" \
    --name YiemStatus --type Keyword \
    --name YiemTurns --type Int \
    --name YiemAgent --type Keyword >/dev/null 2>&1 || true
  attempts=$((attempts + 1))
  if [ "$attempts" -ge 60 ]; then
    echo "Could not create the search attributes in $TEMPORAL_NAMESPACE" >&2
    exit 1
  fi
  sleep 1
done
# Added later (forks name their source): created on its own so that namespaces set up before get it too.
temporal operator search-attribute list --address "$TEMPORAL_ADDRESS" -n "$TEMPORAL_NAMESPACE" | grep -q YiemForkedFrom ||
  temporal operator search-attribute create --address "$TEMPORAL_ADDRESS" -n "$TEMPORAL_NAMESPACE" \
    --name YiemForkedFrom --type Keyword >/dev/null
# Added later (budgets): namespaces set up before have the three above only.
temporal operator search-attribute create --address "$TEMPORAL_ADDRESS" -n "$TEMPORAL_NAMESPACE" \
  --name YiemCost --type Double >/dev/null 2>&1 || true
echo "Namespace $TEMPORAL_NAMESPACE is ready"
