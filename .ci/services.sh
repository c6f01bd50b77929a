#!/usr/bin/env bash
# Services the test suite needs besides Python: a PostgreSQL server (the Dagster instance on PostgreSQL),
# Debian's Chromium (the UI test drives it headless), the morning report's system side: WeasyPrint's libraries
# (pango, harfbuzz's subsetter), its fonts (DejaVu) and poppler-utils (the report test reads the PDF back as PNG and
# text), and for the distributed test (tests/test_distributed.py) redis-server (the Celery broker) and iproute2
# (`ip netns`, the workers' network namespaces); that test starts its own PostgreSQL and Redis on a private bridge,
# so only the packages are needed here. Idempotent: installs only what is missing, starts PostgreSQL only when none
# answers on 127.0.0.1:${OPPORTUNITY_PG_PORT:-5432}, creates the test role once.
# Called by `make test` and by .ci/run; needs root or sudo for apt and for the postgres system user.
set -euo pipefail

PG_PORT="${OPPORTUNITY_PG_PORT:-5432}"
PG_USER="${OPPORTUNITY_PG_USER:-opportunity}"
PG_PASSWORD="${OPPORTUNITY_PG_PASSWORD:-opportunity}"
PG_DB="${OPPORTUNITY_PG_DB:-opportunity}"

if [ "$(id -u)" = 0 ]; then
    as_root() { "$@"; }
    as_postgres() { (cd /tmp && runuser -u postgres -- "$@"); }
else
    as_root() { sudo "$@"; }
    as_postgres() { (cd /tmp && sudo -u postgres "$@"); }
fi

missing=()
for package in postgresql chromium libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fonts-dejavu-core \
        poppler-utils redis-server iproute2; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "services: installing ${missing[*]} (apt)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! pg_isready -q -h 127.0.0.1 -p "$PG_PORT"; then
    version="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
    if ! pg_lsclusters -h | awk '{print $1 "/" $2}' | grep -qx "$version/main"; then
        as_root pg_createcluster "$version" main --port "$PG_PORT" >/dev/null
    fi
    echo "services: starting PostgreSQL $version"
    as_root pg_ctlcluster "$version" main start
    for _ in $(seq 1 30); do
        pg_isready -q -h 127.0.0.1 -p "$PG_PORT" && break
        sleep 1
    done
    pg_isready -h 127.0.0.1 -p "$PG_PORT"
fi

if [ "$(as_postgres psql -p "$PG_PORT" -tAc "SELECT 1 FROM pg_roles WHERE rolname = '$PG_USER'")" != "1" ]; then
    as_postgres psql -p "$PG_PORT" -q -v ON_ERROR_STOP=1 \
        -c "CREATE ROLE \"$PG_USER\" LOGIN CREATEDB PASSWORD '$PG_PASSWORD'"
fi
if [ "$(as_postgres psql -p "$PG_PORT" -tAc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" != "1" ]; then
    as_postgres psql -p "$PG_PORT" -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$PG_DB\" OWNER \"$PG_USER\""
fi
echo "services: PostgreSQL on 127.0.0.1:$PG_PORT (role $PG_USER, database $PG_DB); chromium at $(command -v chromium);" \
    "pdftoppm at $(command -v pdftoppm); $(redis-server --version | cut -d' ' -f1-3)"
