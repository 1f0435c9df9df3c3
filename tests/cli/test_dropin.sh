#!/bin/sh
# The contract of Microsoft's emulator image, through the built binary: with no
# --config the official default entities exist; EMULATOR_HTTP_PORT moves the
# HTTP port (SBEMU_HTTP_PORT wins over it); the image's ACCEPT_EULA, SQL_SERVER,
# MSSQL_SA_PASSWORD and SQL_WAIT_INTERVAL are accepted and ignored; "Emulator
# Service is Successfully Up!" comes once every listener answers; --config
# none creates no entity.
# usage: tests/cli/test_dropin.sh path/to/bin/sbemu
# Prints one line per failure and "N passed, N failed" last; exits 1 on failure.
set -u

SBEMU=${1:?usage: $0 path/to/bin/sbemu}
case $SBEMU in /*) ;; *) SBEMU=$(pwd)/$SBEMU ;; esac
TMP=$(mktemp -d /tmp/sbdrop.XXXXXX)
chmod 755 "$TMP" # the embedded PostgreSQL runs as postgres when we are root
PID=""
stop() {
    [ -n "$PID" ] || return 0
    kill -TERM "$PID" 2>/dev/null
    i=0
    while kill -0 "$PID" 2>/dev/null && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
    wait "$PID" 2>/dev/null
    rc=$?
    PID=""
    return $rc
}
trap 'stop; rm -rf "$TMP"' EXIT INT TERM
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; }
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
sql() { psql -X -Atq -h "$1/pg/run" -U sbemu sbemu -c "$2" 2>&1; }

# start NAME [ARGS...]: sbemu on free ports with data dir $TMP/NAME; $HTTP is where /health is
start() {
    name=$1
    shift
    AMQP=$(free_port)
    "$SBEMU" --data-dir "$TMP/$name" --amqp-port "$AMQP" --amqps-port 0 "$@" >"$TMP/$name.log" 2>&1 &
    PID=$!
    i=0
    while ! curl -fs "http://127.0.0.1:$HTTP/health" >/dev/null 2>&1; do
        i=$((i + 1))
        if [ $i -gt 300 ] || ! kill -0 "$PID" 2>/dev/null; then
            bad "$name: /health never answered on $HTTP"
            sed 's/^/  | /' "$TMP/$name.log"
            stop
            return 1
        fi
        sleep 0.1
    done
    # the line comes once everything answers (a client may connect the moment it appears)
    i=0
    while ! grep -q "Emulator Service is Successfully Up!" "$TMP/$name.log" && [ $i -lt 100 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    grep -q "Emulator Service is Successfully Up!" "$TMP/$name.log" && ok || bad "$name: no 'Successfully Up' line"
}

# 1. Microsoft's image's environment, no --config: its default entities, HTTP on EMULATOR_HTTP_PORT
HTTP=$(free_port)
if EMULATOR_HTTP_PORT=$HTTP ACCEPT_EULA=Y SQL_SERVER=sqledge MSSQL_SA_PASSWORD=secret SQL_WAIT_INTERVAL=0 \
    start defaults; then
    got=$(sql "$TMP/defaults" "SELECT string_agg(path, ',' ORDER BY path) FROM entities")
    want="queue.1,topic.1,topic.1/Subscriptions/subscription.1,topic.1/Subscriptions/subscription.2,topic.1/Subscriptions/subscription.3,topic.1/Subscriptions/subscription.4"
    [ "$got" = "$want" ] && ok || bad "default entities: got '$got'"
    got=$(sql "$TMP/defaults" "SELECT string_agg(s.name || ':' || r.name || ':' || r.filter_type || ':' ||
                              coalesce(r.action_expression, '-'), ',' ORDER BY s.name, r.name)
                              FROM rules r JOIN subscriptions s ON s.id = r.subscription_id")
    want="subscription.1:app-prop-filter-1:Correlation:-,subscription.2:user-prop-filter-1:Correlation:-,subscription.3:\$Default:True:-,subscription.4:sql-filter-1:Sql:SET sys.To = 'Entity'"
    [ "$got" = "$want" ] && ok || bad "default rules: got '$got'"
    got=$(sql "$TMP/defaults" "SELECT max_delivery_count || ',' || lock_duration FROM queues WHERE name = 'queue.1'")
    [ "$got" = "3,00:01:00" ] && ok || bad "queue.1 properties: got '$got'"
    stop && ok || bad "defaults: SIGTERM did not exit 0"
fi

# 2. SBEMU_HTTP_PORT wins over EMULATOR_HTTP_PORT
HTTP=$(free_port)
if SBEMU_HTTP_PORT=$HTTP EMULATOR_HTTP_PORT=$(free_port) start precedence --config none; then
    ok
    # 3. --config none: no entities
    got=$(sql "$TMP/precedence" "SELECT count(*) FROM entities")
    [ "$got" = "0" ] && ok || bad "--config none: $got entities"
    stop && ok || bad "precedence: SIGTERM did not exit 0"
fi

# 4. The moment "Successfully Up" appears, every listener answers at the first try
#    (Testcontainers Java connects then): the AMQP and TLS ports an AMQP header,
#    the HTTP port GET /health with 200.
HTTP=$(free_port)
AMQP=$(free_port)
AMQPS=$(free_port)
"$SBEMU" --data-dir "$TMP/ready" --config none --amqp-port "$AMQP" --amqps-port "$AMQPS" --http-port "$HTTP" \
    >"$TMP/ready.log" 2>&1 &
PID=$!
i=0
while ! grep -q "Emulator Service is Successfully Up!" "$TMP/ready.log" && [ $i -lt 3000 ]; do
    sleep 0.01
    i=$((i + 1))
done
got=$(/usr/bin/python3 - "$AMQP" "$AMQPS" "$HTTP" <<'PY'
import socket, ssl, sys
amqp, amqps, http = (int(p) for p in sys.argv[1:4])
def ask(port, data, tls=False):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    if tls:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(s)
    s.sendall(data)
    got = s.recv(12)
    s.close()
    return got
hdr = b"AMQP\x03\x01\x00\x00"
print(ask(amqp, hdr)[:4] == b"AMQP", ask(amqps, hdr, True)[:4] == b"AMQP",
      ask(http, b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n") == b"HTTP/1.1 200")
PY
)
[ "$got" = "True True True" ] && ok || bad "at 'Successfully Up' not every listener answered (AMQP, TLS, /health): $got"
grep -q "transport error" "$TMP/ready.log" && bad "the readiness probe's connections were logged as errors" || ok
stop && ok || bad "ready: SIGTERM did not exit 0"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
