#!/usr/bin/env bash
# The container image, run for real with podman (scripts/build-image.sh builds
# it): the official image's environment and ports, the default entities, the
# management API and AMQP through the real JS SDK, HEALTHCHECK, SIGTERM ending
# in exit 0, and the data volume keeping an acknowledged message across a
# restart. Host networking with free ports (podman here cannot map ports).
#   tests/image/test_image.sh [IMAGE]      (default sbemu:latest; as root)
# Prints one line per failure and "N passed, N failed" last; exits 1 on failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$(pwd)
IMAGE=${1:-sbemu:latest}
NAME=sbemu-image-test-$$
NAME2=$NAME-again
VOL=sbemu-image-test-vol-$$
CONF_DIR=$(mktemp -d)
printf '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n' \
  >"$CONF_DIR/containers.conf"
export CONTAINERS_CONF=$CONF_DIR/containers.conf
trap 'podman rm -f "$NAME" "$NAME2" >/dev/null 2>&1; podman volume rm -f "$VOL" >/dev/null 2>&1; rm -rf "$CONF_DIR"' EXIT

passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; }
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

if ! podman image exists "$IMAGE"; then
  echo "no image $IMAGE: run scripts/build-image.sh" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
AMQP=$(free_port)
HTTP=$(free_port)

# wait_up N [CONTAINER]: until the container's log has its Nth ready line (one per start), or fail
wait_up() {
  local c=${2:-$NAME}
  for _ in $(seq 1 300); do
    [ "$(podman logs "$c" 2>&1 | grep -c "Emulator Service is Successfully Up!")" -ge "$1" ] && return 0
    sleep 0.1
  done
  podman logs "$c" 2>&1 | sed 's/^/  | /'
  return 1
}

# The JS SDK against the container: the management API makes a queue, AMQP sends
# to it (mode send), or receives what a previous run sent (mode receive).
js() {
  (cd tests/e2e && node - "$1" "$AMQP" "$HTTP" <<'JS'
const { ServiceBusClient } = require("@azure/service-bus");
const { ServiceBusAdministrationClient } = require("service-bus-beta");
const [mode, amqp, http] = process.argv.slice(2);
const k = "SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true";
(async () => {
  const sb = new ServiceBusClient(`Endpoint=sb://localhost:${amqp};${k}`);
  if (mode === "send") {
    const admin = new ServiceBusAdministrationClient(`Endpoint=sb://localhost:${http};${k}`);
    const names = [];
    for await (const q of admin.listQueues()) names.push(q.name);
    await admin.createQueue("made-over-http", { maxDeliveryCount: 7 });
    await sb.createSender("made-over-http").sendMessages({ messageId: "kept", body: "survives a restart" });
    console.log(`queues=${names.join(",")} sent`);
  } else {
    const r = sb.createReceiver("made-over-http");
    const got = await r.receiveMessages(1, { maxWaitTimeInMs: 10000 });
    for (const m of got) await r.completeMessage(m);
    console.log(`received=${got.map((m) => m.messageId).join(",")}`);
  }
  await sb.close();
})().catch((e) => { console.log(`error ${e.code || e.name}: ${e.message}`); process.exit(1); });
JS
  )
}

# 1. the official image's environment, no config: its default entities
# (its data on a named volume, which a second container takes over in 3.)
podman run -d --name "$NAME" --network=host -v "$VOL":/var/lib/sbemu -e SBEMU_AMQP_PORT="$AMQP" -e SBEMU_AMQPS_PORT=0 \
  -e EMULATOR_HTTP_PORT="$HTTP" -e ACCEPT_EULA=Y -e SQL_SERVER=sqledge -e MSSQL_SA_PASSWORD=x \
  -e SQL_WAIT_INTERVAL=0 "$IMAGE" >/dev/null 2>"$CONF_DIR/run.err" || bad "podman run: $(cat "$CONF_DIR/run.err")"
# (podman says on stderr that without systemd it runs no healthcheck timer: the check is run by hand below)
if wait_up 1; then
  ok
  [ "$(curl -fsS "http://127.0.0.1:$HTTP/health")" = '{"status":"healthy","message":"Service is healthy."}' ] && ok ||
    bad "/health on EMULATOR_HTTP_PORT"
  got=$(js send)
  [ "$got" = "queues=queue.1 sent" ] && ok || bad "management API and send: $got"
  podman healthcheck run "$NAME" >/dev/null 2>&1 && ok || bad "HEALTHCHECK failed"
  [ "$(podman exec "$NAME" id -u)" != 0 ] && ok || bad "the emulator runs as root"
  # 2. SIGTERM: connections closed, commits finished, exit 0
  podman stop -t 30 "$NAME" >/dev/null 2>&1
  code=$(podman inspect "$NAME" --format '{{.State.ExitCode}}')
  [ "$code" = 0 ] && ok || bad "exit code $code after SIGTERM"
  # 3. the volume keeps what was acknowledged: a new container (a new writable
  # layer: the old one's would keep its files whatever the volume does) on it
  podman rm -f "$NAME" >/dev/null 2>&1
  podman run -d --name "$NAME2" --network=host -v "$VOL":/var/lib/sbemu -e SBEMU_AMQP_PORT="$AMQP" \
    -e SBEMU_AMQPS_PORT=0 -e EMULATOR_HTTP_PORT="$HTTP" "$IMAGE" >/dev/null 2>"$CONF_DIR/run2.err" ||
    bad "podman run of a second container: $(cat "$CONF_DIR/run2.err")"
  if wait_up 1 "$NAME2"; then
    got=$(js receive)
    [ "$got" = "received=kept" ] && ok || bad "a new container on the same volume: $got"
  else
    bad "a new container on the same volume never came up"
  fi
else
  bad "never up"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
