#!/usr/bin/env bash
# Throughput of sbemu next to two references, measured in one run on one machine:
#   sbemu     build/bin/sbemu, embedded PostgreSQL in a temp dir, fsync on
#   rabbitmq  RabbitMQ 3.10's AMQP 1.0 plugin (durable queue, persistent messages)
#   raw       the same rows COPYed into sbemu's own `messages` table on sbemu's own
#             cluster, then claimed and deleted (or deleted) by plain SQL: what
#             PostgreSQL alone takes, the ceiling for each queue case
# The two brokers are measured by the same client (sbbench.c, built here),
# alternately, BENCH_ROUNDS times; the table shows every round, the median and
# the spread, and flags a round far off its median. Under every timed case two
# lines say what PostgreSQL and the processes were doing (pgwatch.sh).
# BENCH_SOAK=MINUTES runs the soak instead of the cases (soak.sh).
# It prints numbers; it never passes or fails on them. See README.md.
#
#   tests/bench/run.sh [NAME=VALUE]...     e.g. tests/bench/run.sh BENCH_ROUNDS=1 BENCH_COUNT=2000
set -euo pipefail
for arg in "$@"; do
  case $arg in
    BENCH_*=* | RAW_*=* | SBEMU_BIN=*) export "${arg?}" ;;
    *) echo "usage: $0 [BENCH_...=VALUE]... (see tests/bench/README.md)" >&2; exit 64 ;;
  esac
done

rounds=${BENCH_ROUNDS:-3}
# The 1 KiB queue cases run long enough that a round is not decided by what
# ran beside it for a tenth of a second (at 20,000 the fastest took 0.13 s).
# The others keep 20,000: their cases take seconds already, 20 subscriptions
# of 20,000 fill a topic's 1 GB, and the session cases are 1,000 sessions of 20.
count_small=${BENCH_COUNT:-50000}        # messages per 1 KiB queue case (send, receive, backlog)
count_large=${BENCH_COUNT_LARGE:-6000}   # messages per 64 KiB case (at 2,000 the fastest took 0.06 s)
count_other=${BENCH_COUNT_OTHER:-20000}  # messages per topic, session and transaction case
window_small=${BENCH_WINDOW:-1000}       # unsettled sends / credit per connection, 1 KiB
window_large=${BENCH_WINDOW_LARGE:-100}  # the same for 64 KiB: 100 x 64 KiB = 6.4 MB in flight per connection
backlog=${BENCH_BACKLOG:-100000}         # queued before the "large backlog" receives
warmup=${BENCH_WARMUP:-100000}           # 1 KiB messages through each broker before round 1 (0: none)
sizes=${BENCH_SIZES:-"1024 65536"}
conns_list=${BENCH_CONNS:-"1 10"}
timeout=${BENCH_TIMEOUT:-120}            # per sbbench run, seconds
with_rabbitmq=${BENCH_RABBITMQ:-1}
# Each message's story (README "Each message's story") costs sbemu per event;
# the cases run with it off unless BENCH_STORY=on (the emulator's default).
story=${BENCH_STORY:-off}
# Extra Erlang VM flags for RabbitMQ. By default its schedulers do not busy-wait: on 2 cores
# shared with sbemu, PostgreSQL and the client, Erlang's spinning schedulers took the CPU
# that sbemu's latency-bound cases need (peek-lock from a subscription 9,133 -> 45,744 msg/s,
# one session 13,527 -> 39,590 with "+sbwt none ..."), while RabbitMQ's own numbers did not
# move (receive 43,278 -> 41,043, send 55,735 -> 57,362). Set BENCH_RABBITMQ_ERL_ARGS= to
# measure with Erlang's defaults.
rabbit_erl_args=${BENCH_RABBITMQ_ERL_ARGS-"+sbwt none +sbwtdcpu none +sbwtdio none"}
topic_subs=${BENCH_TOPIC_SUBS:-"1 5 20"}  # subscriptions per topic in the publish cases (all match)
sessions_list=${BENCH_SESSIONS:-"1 1000"}  # sessions per queue in the session receive cases
sessions_at_once=${BENCH_SESSIONS_AT_ONCE:-8}  # session receivers at once in the second many-sessions case (1: none)
txn_batch=${BENCH_TXN_BATCH:-10}         # sends per transaction in the txn send cases
many_sessions=${BENCH_MANY_SESSIONS:-10000}  # sessions of one message each in the memory case (0: none)
idle_conns=${BENCH_IDLE_CONNS:-10000}    # connections held open in the idle-connections case (0: none)
# What PostgreSQL was doing during each timed case (pgwatch.sh): sampled every
# BENCH_PG_SAMPLE_MS (0: the counters before and after only), sizes summed
# over the tables LIKE BENCH_PG_TABLES.
sample_ms=${BENCH_PG_SAMPLE_MS:-100}
settle_ms=${BENCH_PG_SETTLE_MS:-2000}    # until pg_stat_* holds all of sbemu's work (pgwatch.sh)
pg_tables=${BENCH_PG_TABLES:-message%}
flag_pct=${BENCH_FLAG_PCT:-25}           # a round further than this (%) from its case's median is flagged
# 1: every send into PostgreSQL (sbemu's and the raw line's, timed or a
# fill) starts right after a CHECKPOINT, so that the receive after it runs in
# the same checkpoint cycle, round after round (see pg_checkpoint). 0: where
# the minutely checkpoints fall.
checkpoint_each=${BENCH_CHECKPOINT:-1}
# Before every case (and the raw line's), up to this many seconds of waiting
# for sbemu's cluster to finish its vacuums, then the vacuum of what is due
# (see pg_vacuum_due; 0: neither).
vacuum_wait_s=${BENCH_VACUUM_WAIT:-120}
# The soak (soak.sh): BENCH_SOAK minutes of sends and peek-lock receives
# together on one queue, at BENCH_SOAK_RATE msg/s, or at soak_share % of the
# best rate a BENCH_SOAK_PROBE-second unthrottled run sustained; a line every
# BENCH_SOAK_REPORT seconds. BENCH_SOAK_PEER=1 soaks RabbitMQ afterwards.
soak_minutes=${BENCH_SOAK:-}
soak_rate=${BENCH_SOAK_RATE:-}
soak_peer=${BENCH_SOAK_PEER:-0}
soak_probe_s=${BENCH_SOAK_PROBE:-20}
soak_every_s=${BENCH_SOAK_REPORT:-60}
soak_share=80
for v in sample_ms settle_ms flag_pct soak_probe_s soak_every_s warmup sessions_at_once vacuum_wait_s; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "$v: a whole number, not '${!v}'" >&2; exit 64; }
done
[[ $story =~ ^(on|off)$ ]] || { echo "BENCH_STORY is on or off, not '$story'" >&2; exit 64; }
[[ $soak_minutes =~ ^([1-9][0-9]*)?$ ]] || { echo "BENCH_SOAK is a number of minutes, not '$soak_minutes'" >&2; exit 64; }
[[ $soak_rate =~ ^([1-9][0-9]*)?$ ]] || { echo "BENCH_SOAK_RATE is messages per second, not '$soak_rate'" >&2; exit 64; }
# BENCH_ONLY=idle runs the idle-connections case alone: no rounds, no
# sessions, no backlog (the loops below run over zero rounds).
only=${BENCH_ONLY:-}
case $only in
  "") ;;
  idle) rounds=0; many_sessions=0 ;;
  *) echo "BENCH_ONLY is idle (or unset), not '$only'" >&2; exit 64 ;;
esac
if [ -n "$soak_minutes" ]; then
  [ -z "$only" ] || { echo "BENCH_SOAK and BENCH_ONLY do not go together" >&2; exit 64; }
  rounds=0; many_sessions=0; idle_conns=0; with_rabbitmq=$soak_peer
fi
# The raw line writes the columns below; the entity column is found by name
# (the schema renamed queue_id to entity_id once and may again).
RAW_ENTITY_COLUMNS=${RAW_ENTITY_COLUMNS:-"entity_id queue_id"}
RAW_ENTITY_ID_SQL=${RAW_ENTITY_ID_SQL:-"SELECT id FROM queues WHERE name = 'rawbench'"}
RAW_COLUMNS="sequence_number, enqueued_at, available_at, message"
SAS_KEY=SAS_KEY_VALUE                     # the emulator's default key

here=$(cd "$(dirname "$0")" && pwd); repo=$(cd "$here/../.." && pwd)
bin=${SBEMU_BIN:-$repo/build/bin/sbemu}
[ -x "$bin" ] || { echo "no $bin: run ./scripts/build.sh first" >&2; exit 1; }
export PATH=$PATH:/usr/sbin:/usr/lib/postgresql/15/bin
# Every connection is a descriptor in the client and in the broker (sbemu and
# RabbitMQ inherit this limit): the idle-connections case needs BENCH_IDLE_CONNS
# of them in each, and more than the usual soft limit of 1024.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

work=$(mktemp -d /tmp/sbemu-bench.XXXXXX); chmod 755 "$work"  # the embedded PostgreSQL runs as postgres
pid=""; rpid=""; epmd_port=""
cleanup() {
  trap - EXIT INT TERM
  local j; for j in $(jobs -p); do [ "$j" = "$pid" ] || [ "$j" = "$rpid" ] || kill "$j" 2>/dev/null || true; done
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
    # sbemu stops its PostgreSQL itself; if it could not, stop that postmaster (fast shutdown).
    local pm; pm=$(head -1 "$work/data/pg/data/postmaster.pid" 2>/dev/null || true)
    if [ -n "$pm" ] && kill -INT "$pm" 2>/dev/null; then
      for _ in $(seq 100); do kill -0 "$pm" 2>/dev/null || break; sleep 0.1; done
    fi
  fi
  if [ -n "$rpid" ]; then
    rabbitmqctl -q -n "$RABBITMQ_NODENAME" stop >/dev/null 2>&1 || true
    for _ in $(seq 100); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.1; done
    if [ -n "${beam_pid:-}" ]; then kill -KILL "$beam_pid" 2>/dev/null || true; fi
    wait "$rpid" 2>/dev/null || true
  fi
  # The private epmd the RabbitMQ node started on its own port.
  if [ -n "$epmd_port" ]; then ERL_EPMD_PORT=$epmd_port epmd -kill >/dev/null 2>&1 || true; fi
  if [ -s "$work/pgprobe.log" ]; then
    echo "the psql session that watched the cases said (pgprobe.log):"; sort "$work/pgprobe.log" | uniq -c | sort -rn | head -5
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }

# ---- the client ----
bash "$here/build-sbbench.sh" "$work/sbbench"

# ---- queues: one per broker case and round, so a failed run cannot leave
# messages behind for the next one ----
qname() { echo "b${1}x${2}r${3}"; }   # size, connections, round
queues='{"Name":"backlog","Properties":{}},{"Name":"rawbench","Properties":{}},{"Name":"idle","Properties":{}}'
queues="$queues"',{"Name":"warmup","Properties":{}}'
queues="$queues"',{"Name":"soak","Properties":{}},{"Name":"soakprobe","Properties":{}}'
for r in $(seq "$rounds"); do for s in $sizes; do for c in $conns_list; do
  queues="$queues,{\"Name\":\"$(qname "$s" "$c" "$r")\",\"Properties\":{}}"
done; done; done
tname() { echo "t${1}r${2}"; }   # subscriptions, round
topics=""
for r in $(seq "$rounds"); do for n in $topic_subs; do
  subs=""; for i in $(seq "$n"); do subs="$subs${subs:+,}{\"Name\":\"s$i\",\"Properties\":{}}"; done
  topics="$topics${topics:+,}{\"Name\":\"$(tname "$n" "$r")\",\"Properties\":{},\"Subscriptions\":[$subs]}"
done; done
tqname() { echo "tq${1}"; }        # the topics' yardstick queue, round
for r in $(seq "$rounds"); do queues="$queues,{\"Name\":\"$(tqname "$r")\",\"Properties\":{}}"; done
sname() { echo "ses${1}r${2}"; }   # sessions, round
# Whether N sessions are also received by sessions_at_once receivers at once
# (each takes an equal share, so N must divide among them).
at_once() { [ "$1" -gt 1 ] && [ "$sessions_at_once" -gt 1 ] && [ $(($1 % sessions_at_once)) = 0 ]; }
xname() { echo "txn${1}r${2}"; }   # connections, round
for r in $(seq "$rounds"); do
  for n in $sessions_list; do
    queues="$queues,{\"Name\":\"$(sname "$n" "$r")\",\"Properties\":{\"RequiresSession\":true}}"
    if at_once "$n"; then
      queues="$queues,{\"Name\":\"$(sname "${n}x$sessions_at_once" "$r")\",\"Properties\":{\"RequiresSession\":true}}"
    fi
  done
  for c in $conns_list; do queues="$queues,{\"Name\":\"$(xname "$c" "$r")\",\"Properties\":{}}"; done
done
queues="$queues,{\"Name\":\"sesmany\",\"Properties\":{\"RequiresSession\":true}}"
cat > "$work/config.json" <<JSON
{"UserConfig":{"Namespaces":[{"Name":"sbemulatorns","Queues":[$queues],"Topics":[$topics]}],"Logging":{"Type":"Console"}}}
JSON

# ---- sbemu ----
amqp=$(port); http=$(port)
"$bin" --data-dir "$work/data" --bind 127.0.0.1 --amqp-port "$amqp" --amqps-port 0 --http-port "$http" \
  --config "$work/config.json" --log-level warn --story "$story" > "$work/sbemu.log" 2>&1 &
pid=$!
for _ in $(seq 150); do curl -fs "http://127.0.0.1:$http/health" >/dev/null && break; sleep 0.2; done
curl -fs "http://127.0.0.1:$http/health" >/dev/null || { echo "sbemu did not start:" >&2; cat "$work/sbemu.log" >&2; exit 1; }
pgsock="$work/data/pg/run"
psql_sb() { psql -X -q -v ON_ERROR_STOP=1 -h "$pgsock" -U sbemu sbemu "$@"; }
# A 1M backlog of 1 KiB messages is more than Service Bus's default 1 GB
# (MaxSizeInMegabytes, not a Config.json property): give the backlog queue room.
psql_sb -c "UPDATE queues SET max_size_in_megabytes = 81920 WHERE name = 'backlog'"

# ---- RabbitMQ: its own node name, ports, epmd and directories ----
rabbit_url=""
if [ "$with_rabbitmq" = 1 ] && command -v rabbitmq-server >/dev/null; then
  epmd_port=$(port)
  RABBITMQ_NODE_PORT=$(port); RABBITMQ_DIST_PORT=$(port)
  export RABBITMQ_NODENAME=sbemu-bench-$$@localhost RABBITMQ_NODE_PORT RABBITMQ_DIST_PORT
  export RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 ERL_EPMD_PORT=$epmd_port ERL_EPMD_ADDRESS=127.0.0.1
  export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1} $rabbit_erl_args"
  export RABBITMQ_MNESIA_BASE="$work/rmq" RABBITMQ_LOG_BASE="$work/rmq-log" RABBITMQ_ENABLED_PLUGINS_FILE="$work/plugins"
  echo '[rabbitmq_amqp1_0].' > "$work/plugins"
  # rabbitmq-server runs the node through `su rabbitmq`, whose pam_limits puts
  # the open-files limit back to 1024; the node's scripts source this file
  # before they start Erlang, so the node gets the hard limit (the idle-connections
  # case holds BENCH_IDLE_CONNS connections).
  export RABBITMQ_CONF_ENV_FILE="$work/rabbitmq-env.conf"
  cat > "$RABBITMQ_CONF_ENV_FILE" <<'SH'
[ -f /etc/rabbitmq/rabbitmq-env.conf ] && . /etc/rabbitmq/rabbitmq-env.conf
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
SH
  mkdir -p "$work/rmq" "$work/rmq-log"
  chown -R rabbitmq:rabbitmq "$work/rmq" "$work/rmq-log" "$work/plugins" 2>/dev/null || true
  rabbitmq-server > "$work/rabbitmq.out" 2>&1 &   # foreground mode, in the background
  rpid=$!
  for _ in $(seq 240); do
    /usr/bin/python3 -c "import socket; socket.create_connection(('127.0.0.1', $RABBITMQ_NODE_PORT), 1)" 2>/dev/null && break
    kill -0 "$rpid" 2>/dev/null || break
    sleep 0.5
  done
  if /usr/bin/python3 -c "import socket; socket.create_connection(('127.0.0.1', $RABBITMQ_NODE_PORT), 1)" 2>/dev/null; then
    rabbit_url="amqp://127.0.0.1:$RABBITMQ_NODE_PORT"
    # Not `rabbitmqctl eval`: after it ran, sbemu's peek-lock receive in this
    # script fell from ~51k to 10-16k msg/s (measured: the same run without the
    # two rabbitmqctl calls stays at ~51k), though nothing showed busy in top.
    # RabbitMQ 3.10 names its node from inside the VM, so beam.smp's command
    # line does not carry the name (`pgrep -f` found nothing): its environment does.
    beam_pid=""
    for p in $(pgrep -x beam.smp); do
      if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "RABBITMQ_NODENAME=$RABBITMQ_NODENAME"; then beam_pid=$p; fi
    done
  else
    echo "rabbitmq: did not start (see below); no peer numbers" >&2; tail -20 "$work/rabbitmq.out" >&2
  fi
elif [ "$with_rabbitmq" = 1 ]; then
  echo "rabbitmq: not installed (apt-get install -y rabbitmq-server); no peer numbers"
fi

# ---- results: "broker|case" -> rates of the rounds; "broker|case|k" -> the
# pg and cpu lines of its k-th round, shown again for a flagged case ----
declare -A results seen notes
declare -a case_order=()
record() {  # broker case rate [note]
  if [ -z "${seen[$2]-}" ]; then seen[$2]=1; case_order+=("$2"); fi
  results[$1|$2]="${results[$1|$2]-} $3"
  local -a rs; read -ra rs <<<"${results[$1|$2]}"
  notes[$1|$2|${#rs[@]}]=${4-}
}
# "broker|case" -> CPU microseconds per message of its rounds (case_cpu_secs over the messages done)
declare -A cpus
record_cpu() {  # broker case messages
  [ -n "$case_cpu_secs" ] && [ -n "$3" ] && [ "$3" -gt 0 ] || return 0
  cpus[$1|$2]="${cpus[$1|$2]-} $(awk -v c="$case_cpu_secs" -v n="$3" 'BEGIN{printf "%.0f", 1e6 * c / n}')"
}
human_size() { [ "$1" -ge 1024 ] && echo "$(($1 / 1024))KiB" || echo "${1}B"; }

# Runs sbbench against one broker; prints its line; records the rate under
# `case` unless case is "-". A failure or timeout is printed and recorded as such.
# Waits until the brokers are quiet: RabbitMQ keeps writing and fsyncing its
# message store for seconds after a case (and after it starts), and on 2 cores
# that landed in the next case, whoever's it was: sbemu's peek-lock receive,
# two fsynced commits per round trip, fell from ~50k to 8-16k msg/s when it ran
# right after RabbitMQ's cases. Quiet: the page cache written back, and
# beam.smp using no CPU and writing nothing for three half-seconds in a row (at
# most 30 s of waiting).
quiesce() {
  sync
  pg_vacuum_due
  [ -n "${beam_pid:-}" ] && [ -r "/proc/$beam_pid/stat" ] || return 0
  local a b wa wb i quiet=0
  for i in $(seq 60); do
    a=$(awk '{print $14 + $15}' "/proc/$beam_pid/stat"); wa=$(beam_writes); sleep 0.5
    b=$(awk '{print $14 + $15}' "/proc/$beam_pid/stat"); wb=$(beam_writes)
    if [ $((b - a)) -le 1 ] && [ "$wa" = "$wb" ]; then quiet=$((quiet + 1)); else quiet=0; fi
    [ $quiet -ge 3 ] && break
  done
  sync
}
# Vacuums before the case what autovacuum would take up under it. A case
# leaves dead rows, and autovacuum takes them up seconds later, under whichever
# case runs then: in the run at 3c44cff, the vacuum of the 64 KiB cases' TOAST
# (~800 MB) ran under round 3's first 1 KiB send (52,713 full-page images,
# 67,540 against 95,362-100,200 msg/s) and under a 64 KiB send on ten
# connections (100,515 images, 2,501 against 4,172-4,905). So, untimed: wait
# (vacuum_wait_s at most) for the vacuums under way in sbemu's cluster, then
# VACUUM each of sbemu's tables that holds, itself or in its TOAST, more dead
# rows than autovacuum's threshold (50 + 20 % of its rows), and say so when it
# took a second or more. What vacuum costs under sustained load is the soak's to show.
pg_vacuum_due() {
  [ "$vacuum_wait_s" -gt 0 ] || return 0
  pg_settle   # the dead rows of sbemu's last work counted (pgwatch.sh)
  local t0=$EPOCHREALTIME ran="" due="" w
  while w=$(psql_sb -Atc "SELECT string_agg(coalesce(c.relname, p.relid::text) || ' (' || p.phase || ')', ', ')
                           FROM pg_stat_progress_vacuum p LEFT JOIN pg_class c ON c.oid = p.relid" 2>/dev/null) &&
        [ -n "$w" ]; do
    ran=$w
    awk -v t="$t0" -v now="$EPOCHREALTIME" -v m="$vacuum_wait_s" 'BEGIN{exit !(now - t >= m)}' && break
    sleep 0.5
  done
  # every table of sbemu's schema, and each TOAST table as its owner's
  local tables=""
  IFS='|' read -r tables due < <(psql_sb -At -F'|' -c "
      SELECT string_agg(DISTINCT quote_ident(coalesce(o.relname, c.relname)), ', '),
             string_agg(s.relname || ' ' || s.n_dead_tup, ', ')
        FROM pg_stat_all_tables s JOIN pg_class c ON c.oid = s.relid
        LEFT JOIN pg_class o ON o.reltoastrelid = c.oid
       WHERE coalesce(o.relnamespace, c.relnamespace) = 'public'::regnamespace
         AND s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0)" 2>/dev/null) || tables=""
  [ -z "$tables" ] || psql_sb -c "VACUUM $tables" >/dev/null 2>&1 || due="$due (failed)"
  awk -v t="$t0" -v now="$EPOCHREALTIME" -v r="$ran" -v d="$due" 'BEGIN{
    s = now - t; if (s < 1) exit
    m = ""; if (r != "") m = "waited for vacuum of " r; if (d != "") m = m (m != "" ? "; " : "") "vacuumed " d " dead"
    printf "  (quiet: %.1f s: %s)\n", s, m }'
}
# Bytes beam.smp has written so far: RabbitMQ compacts its message store in
# the background after the 64 KiB cases, writing for tens of seconds with
# little CPU, and every fsync of sbemu's commits waits behind it (the later
# cases of a run fell to a tenth; without RabbitMQ they did not).
beam_writes() { awk '/^write_bytes/{print $2}' "/proc/$beam_pid/io" 2>/dev/null || echo 0; }

# Before each send into PostgreSQL (BENCH_CHECKPOINT=1), untimed. The first
# change to a page after a checkpoint writes the whole page to the WAL (a
# full-page image); with checkpoints every minute, wherever they fell, a
# receive that followed one paid an image for every page its completes
# touched, and one that did not paid none: the 64 KiB rounds flagged in one
# run were those (receive-and-delete x10: wal 95.8 MB, 11,970 images, 6,232
# msg/s, against 3.8 MB, 0 images and 8,447-8,730 in its other rounds; the
# raw line's receive x10, 7,722 against 11,976-12,270, the same way). Now
# every send begins a cycle and the receive after it pays no images; the
# send pays them for the pages it reuses, the same in every round. What
# checkpoints cost under sustained load is the soak's (soak.sh).
pg_checkpoint() { [ "$checkpoint_each" = 1 ] || return 0; psql_sb -c CHECKPOINT >/dev/null; }

bench_opts=()   # more sbbench options for the next bench (see bench_with)
bench() {  # broker case address mode count size conns window [timeout]
  local broker=$1 case=$2 address=$3 mode=$4 count=$5 size=$6 conns=$7 window=$8 t=${9:-$timeout}
  quiesce
  if [ "$broker" = sbemu ] && [ "$mode" = send ]; then pg_checkpoint; fi
  local -a auth url_args
  if [ "$broker" = sbemu ]; then
    url_args=(--url "amqp://127.0.0.1:$amqp" --address "$address"); auth=(--sas-key "$SAS_KEY")
  else
    # RabbitMQ 3.10 refuses rcv-settle-mode second: its completes count when sent.
    url_args=(--url "$rabbit_url" --address "/queue/$address" --rcv-settle-mode first); auth=(--user guest --password guest)
  fi
  local out rc=0
  case_note=""
  if [ "$case" != - ]; then case_watch_begin "$broker"; fi
  out=$("$work/sbbench" "${url_args[@]}" "${auth[@]}" --mode "$mode" --count "$count" --size "$size" \
        --connections "$conns" --window "$window" --timeout "$t" --label "$broker" "${bench_opts[@]}" 2>&1) || rc=$?
  if [ "$broker" = sbemu ]; then sbemu_last_work=$EPOCHREALTIME; fi
  if [ "$case" = - ]; then
    [ $rc = 0 ] || printf '  (fill) %s\n' "${out//$'\n'/$'\n  (fill) '}"
    return 0
  fi
  case_client_secs=$(sed -n 's/.* msg\/s cpu=\([0-9.]*\).*/\1/p' <<<"$out" | head -1)
  case_watch_end
  printf '  %s\n' "${out//$'\n'/$'\n  '}"
  printf '%s\n' "$case_note"
  local rate; rate=$(sed -n 's/.* rate=\([0-9]*\) msg\/s.*/\1/p' <<<"$out" | head -1)
  if [ $rc = 0 ] && [ -n "$rate" ]; then
    record "$broker" "$case" "$rate" "$case_note"
    record_cpu "$broker" "$case" "$(sed -n 's/.* count=\([0-9]*\) .*/\1/p' <<<"$out" | head -1)"
  elif [ $rc = 2 ]; then record "$broker" "$case" timeout "$case_note"
  else record "$broker" "$case" failed "$case_note"
  fi
}

bench_with() {  # "SBBENCH OPTIONS" broker case ...: bench with these options too
  read -ra bench_opts <<<"$1"; shift
  bench "$@"
  bench_opts=()
}

# ---- raw PostgreSQL: what PostgreSQL alone takes for the same rows in sbemu's
# own `messages` table, with all of its indexes, from `conns` psql sessions in
# parallel, `window` rows per statement, timed inside the server:
#   send            binary COPY, each batch its own transaction (one fsync each);
#   receive         peek-lock: a claim as sbemu's (UPDATE of lock token, lock
#                   expiry and delivery count through FOR UPDATE SKIP LOCKED,
#                   committed without waiting for the disk), the claimed
#                   bodies sent to psql (binary COPY, written to /dev/null),
#                   then a DELETE of the claimed rows by key (fsync);
#   receive-delete  a DELETE ... RETURNING of the first `window` ready rows,
#                   their bodies sent to psql as above (fsync).
# A receive hands every body to its client, as sbemu's must (until 2026-11-27
# the raw receives took each body's length inside the server, and the
# peek-lock deleted by lock token, a scan: README.md says what that moved).
# The scripts (and the COPY files) are written before the clock starts, so
# their generation is not measured. ----
raw_entity_col=""; raw_entity_id=""
raw_prepare() {
  local want
  for want in $RAW_ENTITY_COLUMNS; do
    raw_entity_col=$(psql_sb -Atc "SELECT column_name FROM information_schema.columns
                                    WHERE table_name = 'messages' AND column_name = '$want'")
    [ -n "$raw_entity_col" ] && break
  done
  [ -n "$raw_entity_col" ] || { echo "raw: no column of ($RAW_ENTITY_COLUMNS) in messages; raw line skipped"; return 1; }
  raw_entity_id=$(psql_sb -Atc "$RAW_ENTITY_ID_SQL")
  [ -n "$raw_entity_id" ] || { echo "raw: no entity id from: $RAW_ENTITY_ID_SQL; raw line skipped"; return 1; }
  # Any other NOT NULL column without a default would make the COPY fail: say which.
  local missing
  missing=$(psql_sb -Atc "SELECT string_agg(column_name, ', ') FROM information_schema.columns
                          WHERE table_name = 'messages' AND is_nullable = 'NO' AND column_default IS NULL
                            AND column_name NOT IN ('$raw_entity_col', 'sequence_number', 'enqueued_at',
                                                    'available_at', 'message')")
  [ -z "$missing" ] || { echo "raw: messages also needs ($missing); raw line skipped"; return 1; }
}
# psql script on stdout: a start time, the batches, an end time; a receive
# batch prints "n|<rows it took>". send writes its COPY files next to the
# script (binary format: int8, int8, timestamptz, timestamptz, bytea; the
# message bytes random, incompressible, like sbbench's).
raw_script() {  # mode entity_id first_seq rows batch size file_prefix
  /usr/bin/python3 - "$raw_entity_col" "$RAW_COLUMNS" "$@" <<'PY'
import os, struct, sys
col, cols, mode, eid, seq, rows, batch, size, prefix = sys.argv[1], sys.argv[2], sys.argv[3], *map(int, sys.argv[4:9]), sys.argv[9]
out = sys.stdout
ready = ("SELECT ctid FROM messages WHERE %s = %d AND subqueue = 0 AND state = 0 AND lock_token IS NULL"
         " ORDER BY sequence_number LIMIT %d FOR UPDATE SKIP LOCKED" % (col, eid, batch))
# psql's own CPU (ns on CPU, /proc/PID/schedstat; `\!` runs a shell whose
# parent is psql) before and after the batches: the client's share of the
# machine, without psql's start (about 25 ms each); and what its backend had
# used before them (its start, about 2 ms), which the CPU per message leaves out.
cpu = "\\! awk '{print \"%s|\" $1}' /proc/$PPID/schedstat\n"
out.write("SELECT pg_backend_pid() AS sbpid \\gset\n\\setenv SBPID :sbpid\n")
out.write("\\! awk '{print \"pg0|\" $1}' /proc/$SBPID/schedstat\n")
out.write(cpu % "cpu0")
out.write("SELECT 'start', extract(epoch FROM clock_timestamp());\n")
done, k = 0, 0
while done < rows:
    n = min(batch, rows - done)
    if mode == "send":
        body = os.urandom(size)
        row = [struct.pack(">hiqiq", 5, 8, eid, 8, 0), struct.pack(">iqiq", 8, 0, 8, 0), struct.pack(">i", size), body]
        path = "%s.%d.bin" % (prefix, k)
        with open(path, "wb") as f:
            f.write(b"PGCOPY\n\xff\r\n\0" + struct.pack(">ii", 0, 0))
            for i in range(n):
                row[0] = struct.pack(">hiqiq", 5, 8, eid, 8, seq + done + i)
                f.writelines(row)
            f.write(struct.pack(">h", -1))
        out.write("\\copy messages (%s, %s) FROM '%s' WITH (FORMAT binary)\n" % (col, cols, path))
    elif mode == "receive":
        out.write("SET synchronous_commit = off;\n"
                  "WITH c AS (UPDATE messages m SET lock_token = gen_random_uuid(), locked_until = now() + interval '1 min',"
                  " delivery_count = m.delivery_count + 1 WHERE m.ctid = ANY(ARRAY(%s)) RETURNING m.sequence_number)"
                  " SELECT coalesce(array_agg(sequence_number), '{}') AS seqs FROM c \\gset\n"
                  "SET synchronous_commit = on;\n"
                  "\\o /dev/null\n"
                  "COPY (SELECT message FROM messages WHERE %s = %d AND sequence_number = ANY(:'seqs'::int8[]))"
                  " TO STDOUT (FORMAT binary);\n"
                  "\\o\n"
                  "WITH d AS (DELETE FROM messages WHERE %s = %d AND sequence_number = ANY(:'seqs'::int8[]) RETURNING 1)"
                  " SELECT 'n', count(*) FROM d;\n" % (ready, col, eid, col, eid))
    else:
        # (\copy prints "COPY n" only when not quiet: the count taken)
        out.write("\\set QUIET off\n\\copy (DELETE FROM messages WHERE ctid = ANY(ARRAY(%s)) RETURNING message)"
                  " TO '/dev/null' WITH (FORMAT binary)\n\\set QUIET on\n" % ready)
    done += n
    k += 1
out.write("SELECT 'end', extract(epoch FROM clock_timestamp());\n")
out.write(cpu % "cpu1")
PY
}
raw_seq=1000000000
raw_run() {  # case mode count size conns window ("-" as the case: untimed, not recorded)
  local case=$1 mode=$2 count=$3 size=$4 conns=$5 window=$6 i per
  local -a pids=()
  per=$((count / conns)); rm -f "$work"/raw.*
  pg_vacuum_due
  if [ "$mode" = send ]; then pg_checkpoint; fi
  for i in $(seq "$conns"); do
    raw_script "$mode" "$raw_entity_id" "$raw_seq" "$per" "$window" "$size" "$work/raw.copy.$i" > "$work/raw.sql.$i"
    if [ "$mode" = send ]; then raw_seq=$((raw_seq + per)); fi
  done
  [ "$case" = - ] || case_watch_begin raw
  for i in $(seq "$conns"); do
    psql_sb -At -f "$work/raw.sql.$i" > "$work/raw.out.$i" 2>&1 &
    pids+=($!)
  done
  local failed=0; for i in "${pids[@]}"; do wait "$i" || failed=1; done
  case_client_secs=$(cat "$work"/raw.out.* | awk -F'|' '$1=="cpu0"{t-=$2; k++} $1=="cpu1"{t+=$2; k++}
                                                      END{if (k) printf "%.3f", t / 1e9}')
  case_pg_starts_secs=$(cat "$work"/raw.out.* | awk -F'|' '$1=="pg0"{t+=$2; k++} END{if (k) printf "%.3f", t / 1e9}')
  [ "$case" = - ] || case_watch_end
  rm -f "$work"/raw.sql.* "$work"/raw.copy.*
  if [ $failed = 1 ]; then
    echo "  raw: $mode failed: $(grep -h -m1 -i error "$work"/raw.out.* | head -1)"
    [ "$case" = - ] || { record raw "$case" failed "$case_note"; printf '%s\n' "$case_note"; }
    return
  fi
  [ "$case" != - ] || return 0
  local secs n rate
  secs=$(cat "$work"/raw.out.* | awk -F'|' '$1=="start"&&(s==""||$2<s){s=$2} $1=="end"&&$2>e{e=$2} END{printf "%.3f", e-s}')
  n=$((per * conns))
  if [ "$mode" != send ]; then
    n=$(cat "$work"/raw.out.* | awk -F'|' '$1=="n"{n+=$2} $1~/^COPY [0-9]+$/{n+=substr($1, 6)} END{print n+0}')
  fi
  rate=$(awk -v n="$n" -v s="$secs" 'BEGIN{printf "%.0f", n/s}')
  echo "  raw mode=$mode count=$n size=$size conns=$conns window=$window secs=$secs rate=$rate msg/s"
  printf '%s\n' "$case_note"
  record raw "$case" "$rate" "$case_note"
  record_cpu raw "$case" "$n"
}
# The raw lines of one size and connection count, beside the brokers' cases;
# whatever a receive left behind is deleted before the next send.
raw_cases() {  # tag count size conns window
  local tag=$1 count=$2 size=$3 conns=$4 window=$5
  raw_run "send $tag" send "$count" "$size" "$conns" "$window"
  raw_run "receive $tag" receive "$count" "$size" "$conns" "$window"
  psql_sb -c "DELETE FROM messages WHERE $raw_entity_col = $raw_entity_id" >/dev/null
  raw_run - send "$count" "$size" "$conns" "$window"
  raw_run "receive-delete $tag" receive-delete "$count" "$size" "$conns" "$window"
  psql_sb -c "DELETE FROM messages WHERE $raw_entity_col = $raw_entity_id" >/dev/null
}
with_raw=1
if [ -z "$soak_minutes" ]; then raw_prepare || with_raw=0; fi

# ---- the psql session that watches every timed case ----
. "$here/pgwatch.sh"
pg_probe_start

what="rounds=$rounds, 1 KiB: $count_small msgs window $window_small (topics, sessions, transactions: $count_other), 64 KiB: $count_large msgs window $window_large"
if [ -n "$only" ]; then what="BENCH_ONLY=$only"; fi
if [ -n "$soak_minutes" ]; then what="soak of $soak_minutes min"; fi
echo "sbemu $(git -C "$repo" rev-parse --short HEAD 2>/dev/null) (story $story) on $(nproc) cores, client and brokers sharing them; $what"
if [ -n "$rabbit_url" ]; then echo "rabbitmq $(dpkg-query -W -f '${Version}' rabbitmq-server 2>/dev/null) (AMQP 1.0 plugin, durable queue, persistent messages)"; fi
if pg_ask "string_agg(name || '=' || current_setting(name), ' ' ORDER BY name) FROM pg_settings
           WHERE name IN ('shared_buffers', 'wal_buffers', 'max_wal_size', 'checkpoint_timeout',
                          'checkpoint_completion_target', 'full_page_writes', 'wal_compression', 'synchronous_commit',
                          'fsync', 'autovacuum_naptime', 'autovacuum_vacuum_cost_delay', 'autovacuum_vacuum_cost_limit')"; then
  echo "postgresql: $pg_answer"
fi
if [ "$sample_ms" -gt 0 ] && [ -z "$soak_minutes" ]; then
  echo "each timed case: pg and cpu lines (sampled every $sample_ms ms; tables LIKE '$pg_tables'; see README.md)"
fi

if [ -n "$soak_minutes" ]; then
  . "$here/soak.sh"
  soak_run sbemu
  if [ -n "$rabbit_url" ]; then soak_run rabbitmq; fi
  exit 0
fi

# ---- the cases ----
brokers_in_order() {  # alternate who goes first, so neither always runs on a warmer machine
  local b=(sbemu); [ -n "$rabbit_url" ] && b+=(rabbitmq)
  if [ $(($1 % 2)) = 0 ] && [ ${#b[@]} = 2 ]; then echo "rabbitmq sbemu"; else echo "${b[*]}"; fi
}
# Warm-up, untimed: a fresh cluster's first few hundred MB of WAL go into
# segment files it creates and zero-fills as it writes (IO:WALInitWrite and
# WALInitSync in the pg lines), and a fresh RabbitMQ node creates its files as
# well. Before this, round 1 of case after case was the slow one (send 1 KiB x10
# -30 %, send 64 KiB x1 -56 %, the raw line's 64 KiB cases -27 to -38 %), which
# measured the first minute of a new install rather than the broker. Each broker
# sends and receives-and-deletes BENCH_WARMUP 1 KiB messages and a tenth as
# many of 64 KiB once (the raw line shares sbemu's cluster).
if [ "$rounds" -gt 0 ] && [ "$warmup" -gt 0 ]; then
  echo "warm-up (untimed): $warmup x 1 KiB and $((warmup / 10)) x 64 KiB sent and received-and-deleted by each broker"
  for b in $(brokers_in_order 1); do
    bench "$b" - warmup send "$warmup" 1024 1 "$window_small"
    bench "$b" - warmup receive-delete "$warmup" 1024 1 "$window_small"
    bench "$b" - warmup send "$((warmup / 10))" 65536 1 "$window_large"
    bench "$b" - warmup receive-delete "$((warmup / 10))" 65536 1 "$window_large"
  done
fi
for r in $(seq "$rounds"); do
  echo "round $r/$rounds"
  for size in $sizes; do
    if [ "$size" -ge 65536 ]; then count=$count_large; window=$window_large; else count=$count_small; window=$window_small; fi
    for conns in $conns_list; do
      tag="$(human_size "$size") x$conns"; q=$(qname "$size" "$conns" "$r")
      for b in $(brokers_in_order "$r"); do
        bench "$b" "send $tag"           "$q" send           "$count" "$size" "$conns" "$window"
        bench "$b" "receive $tag"        "$q" receive        "$count" "$size" "$conns" "$window"
        bench "$b" -                     "$q" send           "$count" "$size" "$conns" "$window"
        bench "$b" "receive-delete $tag" "$q" receive-delete "$count" "$size" "$conns" "$window"
      done
      if [ $with_raw = 1 ]; then raw_cases "$tag" "$count" "$size" "$conns" "$window"; fi
    done
  done
done

# Topics (sbemu only: the peer has no Service Bus topics to compare with):
# publish to a topic whose N subscriptions all match (N copies of every
# message: one topic log entry), then receive with peek-lock from one
# subscription of the last topic. The yardstick is a queue in the same round,
# sent to and received from with the same count: the 1 KiB queue cases above
# move 50,000 at another point of the round, and a receive of 20,000 measured
# beside one of 50,000 compared ramp-ups rather than entities.
topic_yardstick() {  # round
  local q; q=$(tqname "$1")
  bench sbemu "send 1KiB x1, queue of $count_other" "$q" send "$count_other" 1024 1 "$window_small"
  bench sbemu "receive 1KiB x1, queue of $count_other" "$q" receive "$count_other" 1024 1 "$window_small"
}
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then topic_yardstick "$r"; fi  # before the topics in odd rounds, after in even ones
  for n in $topic_subs; do
    bench sbemu "publish 1KiB x1, $n subs" "$(tname "$n" "$r")" send "$count_other" 1024 1 "$window_small"
  done
  last=${topic_subs##* }
  bench sbemu "receive 1KiB x1, 1 of $last subs" "$(tname "$last" "$r")/Subscriptions/s1" receive "$count_other" 1024 1 "$window_small"
  if [ $((r % 2)) = 0 ]; then topic_yardstick "$r"; fi
done

# Sessions (sbemu only: the peer has no Service Bus sessions): fill a queue
# that requires sessions with send --sessions N (message i to session i % N,
# so N sessions of count/N), then receive-session empties them with peek-lock,
# one next-available session link at a time (detach, then accept the next).
# The count is rounded down to a multiple of N (every session as full).
# Many sessions are then received again by sessions_at_once receivers at a
# time, as .NET's ServiceBusSessionProcessor does by default
# (MaxConcurrentSessions 8): here each on a connection of its own, each
# taking an equal share of the sessions one after another.
for r in $(seq "$rounds"); do
  for n in $sessions_list; do
    q=$(sname "$n" "$r"); scount=$((count_other / n * n))
    label="$n sessions"; [ "$n" = 1 ] && label="1 session"
    if [ "$scount" = 0 ]; then echo "  session receive, $label: skipped, BENCH_COUNT_OTHER $count_other < $n"; continue; fi
    bench_with "--sessions $n" sbemu - "$q" send "$scount" 1024 1 "$window_small"
    bench_with "--sessions $n" sbemu "session receive 1KiB x1, $label" "$q" receive-session "$scount" 1024 1 "$window_small"
    k=$sessions_at_once
    if at_once "$n"; then
      q=$(sname "${n}x$k" "$r")
      bench_with "--sessions $n" sbemu - "$q" send "$scount" 1024 1 "$window_small"
      bench_with "--sessions $n" sbemu "session receive 1KiB x$k, $label" "$q" receive-session "$scount" 1024 "$k" "$window_small"
    fi
  done
done

# Idle sessions cost nothing: 10,000 sessions of one message each, received by
# next-available (10 connections), with sbemu's resident memory before the fill
# and after the receive (the session lock is a database row, taken and let go).
if [ "$many_sessions" -gt 0 ]; then
  rss() { awk '/^VmRSS/{print $2}' "/proc/$pid/status"; }
  rss_before=$(rss)
  bench_with "--sessions $many_sessions" sbemu - sesmany send "$many_sessions" 1024 10 "$window_small"
  rss_filled=$(rss)
  bench_with "--sessions $many_sessions" sbemu "session receive 1KiB x10, $many_sessions sessions of 1" sesmany \
    receive-session "$many_sessions" 1024 10 "$window_small"
  echo "  sbemu RSS: $rss_before kB before, $rss_filled kB with $many_sessions sessions waiting," \
       "$(rss) kB after receiving them all"
fi

# Transactions (sbemu only: RabbitMQ 3.10's AMQP 1.0 plugin has no
# coordinator): each connection declares, sends BENCH_TXN_BATCH messages in
# the transaction, discharges once all are answered, and declares the next;
# a message counts when its transaction commits. Compare with `send 1KiB xN`.
for r in $(seq "$rounds"); do
  for c in $conns_list; do
    bench_with "--txn-batch $txn_batch" sbemu "txn send 1KiB x$c, $txn_batch per txn" "$(xname "$c" "$r")" send \
      "$count_other" 1024 "$c" "$window_small"
  done
done

# Receiving from a large backlog: fill once (10 connections), then each round
# takes count messages from the front with peek-lock; the queue never drops
# below the backlog.
fill=$((backlog + rounds * count_small)); fill_timeout=$((timeout + fill / 1000))
bcase="receive 1KiB x1, backlog $backlog"
[ "$rounds" -gt 0 ] && echo "backlog: $fill messages of 1 KiB per broker"
for b in $(brokers_in_order 1); do
  [ "$rounds" -gt 0 ] || break
  t0=$(now)
  bench "$b" - backlog send "$fill" 1024 10 "$window_small" "$fill_timeout"
  echo "  $b: filled in $(awk -v a="$t0" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}') s"
done
for r in $(seq "$rounds"); do
  for b in $(brokers_in_order "$r"); do
    bench "$b" "$bcase" backlog receive "$count_small" 1024 1 "$window_small"
  done
done

# Idle connections: what a connection that is open and does nothing costs each
# broker. `sbbench --mode connect` opens N (at most 200 being opened at once):
# sbemu's as the SDKs open them (SASL ANONYMOUS, a session and the $cbs links,
# the put-token accepted), RabbitMQ's with SASL PLAIN and the AMQP open alone;
# and holds them until its stdin closes. The broker's resident memory is read
# before, and 2 s after all are open; its CPU (utime + stime) over 5 s with
# all of them idle. sbemu's --handshake-timeout (30 s) ends at each
# connection's open, which comes right after its connect.
idle_rss() { awk '/^VmRSS/{print $2}' "/proc/$1/status"; }     # kB
idle_cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }        # clock ticks
idle_nofile() { awk '/^Max open files/{print $4}' "/proc/$1/limits"; }
idle_summary=""
idle_case() {  # broker: one summary part, "BROKER N open in S s, K KB each, CPU idle C s/s"
  local broker=$1 bpid cpid rc=0 rss0 rss1="" cpu0 cpu1 t0 t1 secs
  local -a args
  if [ "$broker" = sbemu ]; then
    bpid=$pid; args=(--url "amqp://127.0.0.1:$amqp" --address idle --sas-key "$SAS_KEY")
  else
    bpid=${beam_pid:-}; args=(--url "$rabbit_url" --address /queue/idle --user guest --password guest)
  fi
  if [ -z "$bpid" ] || [ ! -r "/proc/$bpid/status" ]; then idle_summary+="; $broker: no process to measure"; return; fi
  local limit; limit=$(idle_nofile "$bpid")
  if [ "$limit" != unlimited ] && [ "$limit" -lt $((idle_conns + 100)) ]; then
    idle_summary+="; $broker: skipped, its open-files limit is $limit"; return
  fi
  quiesce
  local fifo="$work/idle.in" out="$work/idle.$broker.out"
  rm -f "$fifo"; mkfifo "$fifo"
  exec 9<>"$fifo"   # the fifo's only writer: sbbench holds its connections until fd 9 closes
  rss0=$(idle_rss "$bpid")
  "$work/sbbench" "${args[@]}" --mode connect --connections "$idle_conns" --timeout "$timeout" \
    --label "$broker" < "$fifo" 9>&- > "$out" 2>&1 &
  cpid=$!
  while kill -0 "$cpid" 2>/dev/null && ! grep -q '^connect: all' "$out"; do sleep 0.2; done
  if grep -q '^connect: all' "$out"; then
    sleep 2
    rss1=$(idle_rss "$bpid")
    t0=$(now); cpu0=$(idle_cpu "$bpid"); sleep 5; cpu1=$(idle_cpu "$bpid"); t1=$(now)
  fi
  exec 9>&-
  wait "$cpid" || rc=$?
  rm -f "$fifo"
  sed '/^connect: all/d; s/^/  /' "$out"
  if [ -z "$rss1" ] || [ "$rc" != 0 ]; then
    idle_summary+="; $broker failed (exit $rc)"; return
  fi
  secs=$(sed -n 's/.* secs=\([0-9.]*\) .*/\1/p' "$out" | head -1)
  idle_summary+="; $(awk -v b="$broker" -v n="$idle_conns" -v s="$secs" -v r0="$rss0" -v r1="$rss1" \
    -v c0="$cpu0" -v c1="$cpu1" -v t0="$t0" -v t1="$t1" -v hz="$(getconf CLK_TCK)" \
    'BEGIN{printf "%s %d open in %.1f s, %.1f KB each, CPU idle %.3f s/s", b, n, s, (r1 - r0) / n,
                  (c1 - c0) / hz / (t1 - t0)}')"
  echo "  $broker RSS: $rss0 kB before, $rss1 kB with $idle_conns connections open"
}
if [ "$idle_conns" -gt 0 ]; then
  echo "idle connections: $idle_conns per broker"
  for b in $(brokers_in_order 1); do idle_case "$b"; done
  echo "idle connections: ${idle_summary#; }"
fi

# ---- the table: per case and broker every round, the median, the spread
# ((max - min) / median) and the ratios of the medians; a round further than
# flag_pct % from its median is marked "!" and listed after the table with the
# pg and cpu lines of every round of its case ----
median() {  # rates... -> their median, or the failure if most rounds failed
  local -a nums=(); local bad="" nbad=0 v n
  for v in "$@"; do
    if [[ $v =~ ^[0-9]+$ ]]; then nums+=("$v"); else bad=$v; nbad=$((nbad + 1)); fi
  done
  n=${#nums[@]}
  if [ "$n" = 0 ] || [ "$nbad" -gt "$n" ]; then echo "${bad:--}"; return; fi
  mapfile -t nums < <(printf '%s\n' "${nums[@]}" | sort -n)
  if [ $((n % 2)) = 1 ]; then echo "${nums[n / 2]}"; else echo $(((nums[n / 2 - 1] + nums[n / 2]) / 2)); fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a ~ /^[0-9]+$/ && b ~ /^[0-9]+$/ && b > 0) printf "%.2f", a/b; else print "-" }'; }
spread() {  # median rates... -> "(max - min) / median" in %, "-" with fewer than two numbers
  local m=$1; shift
  printf '%s\n' "$@" | awk -v m="$m" '/^[0-9]+$/ { n++; if (n == 1 || $1 > hi) hi = $1; if (n == 1 || $1 < lo) lo = $1 }
    END { if (n < 2 || m !~ /^[0-9]+$/ || m == 0) print "-"; else printf "%.0f%%\n", 100 * (hi - lo) / m }'
}
off() {  # median rate -> how far the rate is from the median, in % (signed), "" if not a number
  awk -v m="$1" -v r="$2" 'BEGIN { if (m ~ /^[0-9]+$/ && r ~ /^[0-9]+$/ && m > 0) printf "%+.0f", 100 * (r - m) / m }'
}
declare -a flagged=()
if [ ${#case_order[@]} -gt 0 ]; then
  echo
  echo "messages per second (higher is better): every round, their median and spread ((max - min) / median);"
  echo "! marks a round more than $flag_pct % off its median"
  printf '%-46s %-8s %-*s %9s %7s %15s %10s\n' case broker $((rounds * 9 > 12 ? rounds * 9 : 12)) rounds median spread \
    sbemu/rabbitmq sbemu/raw
fi
for c in "${case_order[@]}"; do
  label=$c
  s=$(median ${results[sbemu|$c]-}); m=$(median ${results[rabbitmq|$c]-}); w=$(median ${results[raw|$c]-})
  for b in sbemu rabbitmq raw; do
    [ -n "${results[$b|$c]-}" ] || continue
    read -ra rs <<<"${results[$b|$c]}"
    med=$(median "${rs[@]}"); shown=""; flag=0
    for v in "${rs[@]}"; do
      o=$(off "$med" "$v"); mark=""
      if [ -n "$o" ] && [ "${o#[+-]}" -gt "$flag_pct" ]; then mark="!"; flag=1; fi
      shown+="$(printf '%-9s' "$v$mark")"
    done
    [ $flag = 1 ] && flagged+=("$b|$c")
    r1=""; r2=""
    if [ "$b" = sbemu ]; then r1=$(ratio "$s" "$m"); r2=$(ratio "$s" "$w"); fi
    name=$b; [ "$b" = raw ] && name=raw-pg
    printf '%-46s %-8s %-*s %9s %7s %15s %10s\n' "$label" "$name" $((rounds * 9 > 12 ? rounds * 9 : 12)) "$shown" \
      "$med" "$(spread "$med" "${rs[@]}")" "$r1" "$r2"
    label=""
  done
done
# The topics against their yardstick queue (same count, same rounds): medians.
if [ "$rounds" -gt 0 ] && [ -n "$topic_subs" ]; then
  qs=$(median ${results[sbemu|send 1KiB x1, queue of $count_other]-})
  qr=$(median ${results[sbemu|receive 1KiB x1, queue of $count_other]-})
  line=""
  for n in $topic_subs; do
    p=$(median ${results[sbemu|publish 1KiB x1, $n subs]-})
    line+="${line:+, }$n subs $p ($(ratio "$p" "$qs"))"
  done
  last=${topic_subs##* }
  sr=$(median ${results[sbemu|receive 1KiB x1, 1 of $last subs]-})
  echo
  echo "topics against a queue of the same count ($count_other): publish to $line of the queue's send $qs;"
  echo "  receive from 1 of $last subs $sr, $(ratio "$sr" "$qr") of the queue's receive $qr"
fi
# What a message cost the machine, and the rate that cost allows: client,
# broker and PostgreSQL share the cores, so no line can run faster than
# cores / (CPU per message), however well it overlaps its work. Where
# sbemu's ceiling is below the raw line's rate, its CPU alone keeps it there.
if [ ${#cpus[@]} -gt 0 ]; then
  ncpu=$(nproc)
  echo
  echo "CPU per message: every process of the line (broker, PostgreSQL, client; not the sampler), in µs, the median"
  echo "of the rounds, and the most msg/s $ncpu cores give at that cost ($ncpu s of CPU a second / CPU per message);"
  echo "the last column: sbemu's ceiling against the raw line's median rate"
  printf '%-46s %18s %18s %18s %16s\n' case "sbemu µs (max)" "rabbitmq µs (max)" "raw-pg µs (max)" "sbemu max/raw"
  for c in "${case_order[@]}"; do
    [ -n "${cpus[sbemu|$c]-}${cpus[rabbitmq|$c]-}${cpus[raw|$c]-}" ] || continue
    row=(); smax=""
    for b in sbemu rabbitmq raw; do
      cell="-"
      if [ -n "${cpus[$b|$c]-}" ]; then
        u=$(median ${cpus[$b|$c]})
        mx=$(awk -v u="$u" -v n="$ncpu" 'BEGIN{ if (u > 0) printf "%.0f", n * 1e6 / u }')
        cell="$u ($mx)"; [ "$b" = sbemu ] && smax=$mx
      fi
      row+=("$cell")
    done
    printf '%-46s %18s %18s %18s %16s\n' "$c" "${row[@]}" "$(ratio "$smax" "$(median ${results[raw|$c]-})")"
  done
fi
if [ ${#flagged[@]} -gt 0 ]; then
  echo
  echo "flagged: rounds more than $flag_pct % off their median, and what each round of the case saw"
  for f in "${flagged[@]}"; do
    b=${f%%|*}; c=${f#*|}
    read -ra rs <<<"${results[$f]}"
    med=$(median "${rs[@]}"); what=""
    for k in "${!rs[@]}"; do
      o=$(off "$med" "${rs[k]}")
      if [ -n "$o" ] && [ "${o#[+-]}" -gt "$flag_pct" ]; then what+=", round $((k + 1)) ${rs[k]} ($o %)"; fi
    done
    echo "$c, $b (median $med)${what}"
    for k in "${!rs[@]}"; do
      printf '  round %d: %s\n' $((k + 1)) "${rs[k]}"
      [ -z "${notes[$f|$((k + 1))]-}" ] || printf '  %s\n' "${notes[$f|$((k + 1))]//$'\n'/$'\n  '}"
    done
  done
fi
echo
pg_sampler_total
echo "sbemu peak RSS (VmHWM): $(awk '/^VmHWM/{print $2, $3}' "/proc/$pid/status")"
if [ -n "${beam_pid:-}" ] && [ -r "/proc/$beam_pid/status" ]; then
  echo "rabbitmq peak RSS (VmHWM, beam.smp): $(awk '/^VmHWM/{print $2, $3}' "/proc/$beam_pid/status")"
fi
if grep -q -i -E "error|fatal" "$work/sbemu.log"; then
  echo "sbemu logged errors:"; grep -i -E "error|fatal" "$work/sbemu.log" | sort | uniq -c | sort -rn | head -10
fi
