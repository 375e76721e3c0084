#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests (Debian's `postgresql`
# package, installed when missing), in a temp data directory, fsync off.
#
#   eval "$(tests/support/pg-server.sh start [TCP_ADDRESS] [durable])"   # sets HERMES_CRON_TEST_PG, PG_TEST_DIR
#   tests/support/pg-server.sh stop "$PG_TEST_DIR"
#   tests/support/pg-server.sh pause "$PG_TEST_DIR"    # the server goes away (data kept)
#   tests/support/pg-server.sh resume "$PG_TEST_DIR"   # and comes back, as it was started
#
# PG_MAX_CONNECTIONS sets the server's max_connections (default 400): the
# fault tests start a server that runs out of them.
#
# It listens on a Unix socket in its directory, and also on TCP_ADDRESS
# (port 5432) when given (the partition tests reach it from another network
# namespace). `durable` keeps fsync and synchronous commits on (the
# benchmark); tests run without them. Runs as root: the server itself runs
# as the `postgres` user.
set -euo pipefail

pgbin() {
    local v
    v=$(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -1)
    [ -n "$v" ] && echo "/usr/lib/postgresql/$v/bin"
}

case "${1:-}" in
start)
    if [ -z "$(pgbin)" ] || [ ! -x "$(pgbin)/initdb" ]; then
        echo "installing postgresql" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq postgresql >&2
    fi
    bin=$(pgbin)
    # The package starts a cluster of its own: not ours, left alone.
    dir=$(mktemp -d /tmp/hermes-cron-pg.XXXXXX)
    chmod 755 "$dir"
    chown postgres:postgres "$dir"
    runuser -u postgres -- "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync \
        -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1
    listen="''"
    fast="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    [ "${3:-}" = durable ] && fast=""
    if [ -n "${2:-}" ]; then
        listen="'${2}'"
        echo "host all all 0.0.0.0/0 trust" >>"$dir/data/pg_hba.conf"
    fi
    echo "-c listen_addresses=$listen -k $dir $fast -c max_connections=${PG_MAX_CONNECTIONS:-400} -c shared_buffers=64MB" \
        >"$dir/options"
    runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "$(cat "$dir/options")" start >&2
    echo "export PG_TEST_DIR=$dir"
    echo "export HERMES_CRON_TEST_PG='host=$dir user=postgres dbname=postgres'"
    ;;
pause)
    dir=${2:?the directory start printed}
    runuser -u postgres -- "$(pgbin)/pg_ctl" -D "$dir/data" -m immediate -w stop >&2
    ;;
resume)
    dir=${2:?the directory start printed}
    runuser -u postgres -- "$(pgbin)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "$(cat "$dir/options")" start >&2
    ;;
stop)
    dir=${2:?the directory start printed}
    bin=$(pgbin)
    runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >&2 || true
    rm -rf "$dir"
    ;;
*)
    echo "usage: $0 start [TCP_ADDRESS] [durable] | pause DIR | resume DIR | stop DIR" >&2
    exit 2
    ;;
esac
