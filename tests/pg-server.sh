#!/bin/sh
# A throwaway PostgreSQL server for the ledger's tests: Debian's postgresql, initdb into DIR,
# run by an unprivileged user (initdb refuses root: as root the server runs as nobody), no TCP,
# one Unix socket in DIR, trust for the superuser `calcroute`. Nothing outside DIR is touched.
#   pg-server.sh start DIR    prints the base URI (postgresql:///?host=DIR&user=calcroute)
#   pg-server.sh db DIR NAME  creates database NAME, prints its URI
#   pg-server.sh restart DIR  stops and starts it (every connection is cut)
#   pg-server.sh stop DIR     stops the server (the caller removes DIR)
# Exit 77 when no PostgreSQL server is installed (the caller skips, saying so).
set -eu
cmd=$1 dir=$2
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bin" ] && [ -x "$bin/initdb" ] || { echo "no PostgreSQL server (Debian: postgresql)" >&2; exit 77; }
as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}
uri() { echo "postgresql:///$1?host=$dir&user=calcroute"; }
case $cmd in
start)
    mkdir -p "$dir"
    # Others may reach the socket (a container's user: tests/test_image.sh); the data
    # directory inside stays the owner's alone.
    chmod 755 "$dir"
    [ "$(id -u)" != 0 ] || chown nobody "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -U calcroute -A trust -E UTF8 --no-locale \
        >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    # fsync stays on: the tests kill appenders and count on commits being durable.
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses= -c unix_socket_directories=$dir -c max_connections=100" \
        start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    uri ""
    ;;
db)
    "$bin/createdb" -h "$dir" -U calcroute "$3"
    uri "$3"
    ;;
restart)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 restart >/dev/null
    ;;
stop)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
    ;;
*)
    echo "usage: pg-server.sh start|db|restart|stop DIR [NAME]" >&2
    exit 2
    ;;
esac
