#!/bin/sh
# Creates the namespace yiem uses and the search attributes its workflows write (the same ones
# `yiem server` registers on the dev server: YIEM_SEARCH_ATTRIBUTES in src/server/devServer.ts).
set -eu

until temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do sleep 1; done

temporal operator namespace describe --address "$TEMPORAL_ADDRESS" -n "$TEMPORAL_NAMESPACE" >/dev/null 2>&1 ||
  temporal operator namespace create --address "$TEMPORAL_ADDRESS" -n "$TEMPORAL_NAMESPACE" --retention "$TEMPORAL_RETENTION"

temporal operator search-attribute create --address "$TEMPORAL_ADDRESS" -n "$TEMPORAL_NAMESPACE" \
  --name YiemStatus --type Keyword \
  --name YiemTurns --type Int \
  --name YiemAgent --type Keyword || echo "search attributes exist"
echo "Namespace $TEMPORAL_NAMESPACE is ready"
