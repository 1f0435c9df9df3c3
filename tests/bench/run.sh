#!/usr/bin/env bash
# Side-by-side throughput: sbemu (embedded PostgreSQL, fsync on) and RabbitMQ's
# AMQP 1.0 plugin, measured by the same Proton client (amqp_bench.py).
# Prints numbers; it never passes or fails on them.
#   tests/bench/run.sh [COUNT] [SIZE]      (needs build/bin/sbemu; RabbitMQ optional)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); repo=$(cd "$here/../.." && pwd)
count=${1:-20000}; size=${2:-100}
bin=${SBEMU_BIN:-$repo/build/bin/sbemu}
work=$(mktemp -d /tmp/sbemu-bench.XXXXXX); chmod 755 "$work"  # the embedded PostgreSQL runs as postgres
port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
amqp=$(port); http=$(port)
cat > "$work/config.json" <<JSON
{"UserConfig":{"Namespaces":[{"Name":"sbemulatorns","Queues":[{"Name":"bench","Properties":{}}],"Topics":[]}],"Logging":{"Type":"Console"}}}
JSON
"$bin" --data-dir "$work/data" --amqp-port "$amqp" --amqps-port 0 --http-port "$http" --config "$work/config.json" \
  --log-level warn > "$work/sbemu.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$http/health" >/dev/null && break; sleep 0.2; done
echo "sbemu $(git -C "$repo" rev-parse --short HEAD 2>/dev/null) on $(nproc) cores; client and brokers share them"
/usr/bin/python3 "$here/amqp_bench.py" "amqp://127.0.0.1:$amqp" bench "$count" --size "$size" --sas-key SAS_KEY_VALUE --label sbemu

export PATH=$PATH:/usr/sbin
if command -v rabbitmq-server >/dev/null; then
  export RABBITMQ_NODENAME=sbemu-bench-$$@localhost RABBITMQ_NODE_PORT=$(port) RABBITMQ_DIST_PORT=$(port)
  export RABBITMQ_MNESIA_BASE="$work/rmq" RABBITMQ_LOG_BASE="$work/rmq-log" RABBITMQ_ENABLED_PLUGINS_FILE="$work/plugins"
  echo '[rabbitmq_amqp1_0].' > "$work/plugins"
  mkdir -p "$work/rmq" "$work/rmq-log"
  chown -R rabbitmq:rabbitmq "$work/rmq" "$work/rmq-log" "$work/plugins" 2>/dev/null || true
  rabbitmq-server > "$work/rabbitmq.out" 2>&1 &   # foreground mode, in the background
  rpid=$!
  for _ in $(seq 120); do
    /usr/bin/python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $RABBITMQ_NODE_PORT), 1)" 2>/dev/null && break
    sleep 0.5
  done
  /usr/bin/python3 "$here/amqp_bench.py" "amqp://guest:guest@127.0.0.1:$RABBITMQ_NODE_PORT" /queue/bench "$count" \
    --size "$size" --label rabbitmq || echo "rabbitmq: bench failed (see $work/rabbitmq.out)"
  rabbitmqctl -q -n "$RABBITMQ_NODENAME" stop >/dev/null 2>&1 || kill "$rpid" 2>/dev/null || true
  wait "$rpid" 2>/dev/null || true
else
  echo "rabbitmq: not installed (apt-get install rabbitmq-server) - no peer numbers"
fi
