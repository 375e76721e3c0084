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
# fault tests start a server that runs out of them. PG_SSL_CERT and
# PG_SSL_KEY (PEM files) turn TLS on with that certificate; PG_SSL_CA (a CA's
# certificate) then also makes TCP clients prove themselves with a
# certificate it signed (`hostssl ... cert`). The TLS tests use them.
# PG_PASSWORD makes TCP clients give that password (the user postgres's).
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
    tls=""
    if [ -n "${PG_SSL_CERT:-}" ]; then
        install -o postgres -g postgres -m 600 "$PG_SSL_CERT" "$dir/server.crt"
        install -o postgres -g postgres -m 600 "$PG_SSL_KEY" "$dir/server.key"
        tls="-c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key"
        if [ -n "${PG_SSL_CA:-}" ]; then
            install -o postgres -g postgres -m 600 "$PG_SSL_CA" "$dir/client-ca.crt"
            tls="$tls -c ssl_ca_file=$dir/client-ca.crt"
        fi
    fi
    if [ -n "${2:-}" ]; then
        listen="'${2}'"
        # First, so they win over initdb's loopback lines (a client on
        # 127.0.0.x may come from 127.0.0.1).
        if [ -n "${PG_SSL_CA:-}" ]; then
            sed -i '1i hostssl all all 0.0.0.0/0 cert' "$dir/data/pg_hba.conf"
        elif [ -n "${PG_PASSWORD:-}" ]; then
            sed -i '1i host all all 0.0.0.0/0 scram-sha-256' "$dir/data/pg_hba.conf"
        else
            echo "host all all 0.0.0.0/0 trust" >>"$dir/data/pg_hba.conf"
        fi
    fi
    echo "-c listen_addresses=$listen -k $dir $fast -c max_connections=${PG_MAX_CONNECTIONS:-400} -c shared_buffers=64MB $tls" \
        >"$dir/options"
    runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "$(cat "$dir/options")" start >&2
    if [ -n "${PG_PASSWORD:-}" ]; then
        runuser -u postgres -- "$bin/psql" -h "$dir" -U postgres -qc \
            "ALTER USER postgres PASSWORD '$PG_PASSWORD'" >&2
    fi
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
