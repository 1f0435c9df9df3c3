# The soak, sourced by run.sh when BENCH_SOAK is set (after pgwatch.sh; run.sh
# sets soak_minutes, soak_rate, soak_probe_s, soak_every_s, soak_share and the
# brokers' addresses).
#
# `sbbench --mode soak` sends at a fixed rate on one connection and receives in
# peek-lock + completes on another, on one queue, for BENCH_SOAK minutes, and
# prints a line per interval (BENCH_SOAK_REPORT, 60 s). For each such line
# this file adds what the interval did to sbemu's store: the messages tables'
# size at its end, the WAL written in it, sbemu's RSS, and from the samples
# taken through it the share of time a vacuum ran and the busiest wait. The
# summary at the end holds the figures against the targets of issue 22:
# throughput per minute within 20 % of the mean; table and WAL flat after the
# first 5 minutes; RSS flat.
#
# Without BENCH_SOAK_RATE, an unthrottled soak of BENCH_SOAK_PROBE seconds on a
# queue of its own finds the best sustained rate (the lower of the send and the
# complete rate), its leftovers are received and deleted, and the soak runs at
# soak_share % of that rate.

soak_broker_args() {  # broker -> soak_args (url, auth) and soak_prefix (address prefix)
  if [ "$1" = sbemu ]; then
    soak_args=(--url "amqp://127.0.0.1:$amqp" --sas-key "$SAS_KEY"); soak_prefix=""
  else
    # RabbitMQ 3.10 refuses rcv-settle-mode second: its completes count when sent (no latency).
    soak_args=(--url "$rabbit_url" --user guest --password guest --rcv-settle-mode first); soak_prefix=/queue/
  fi
}

# The best rate an unthrottled soak sustains, in soak_best (empty if the run failed).
soak_find_rate() {  # broker
  local out rc=0 queued
  soak_best=""
  quiesce
  out=$("$work/sbbench" "${soak_args[@]}" --address "${soak_prefix}soakprobe" --mode soak --rate 0 \
        --duration "$soak_probe_s" --report-every "$soak_probe_s" --timeout "$timeout" --label "$1" 2>&1) || rc=$?
  printf '  %s\n' "${out//$'\n'/$'\n  '}"
  soak_best=$(sed -n 's/.* mode=soak .* rate=\([0-9]*\) msg\/s.*/\1/p' <<<"$out" | tail -1)
  if [ $rc != 0 ] || [ -z "$soak_best" ] || [ "$soak_best" = 0 ]; then soak_best=""; return; fi
  # What the sends left in the queue goes, so the store is as small as before.
  queued=$(sed -n 's/.* soak interval=.* queued=\(-\{0,1\}[0-9]*\).*/\1/p' <<<"$out" | tail -1)
  if [ -n "$queued" ] && [ "$queued" -gt 0 ]; then
    local -a plain=("${soak_args[@]}")
    if [ "$1" = rabbitmq ]; then plain=(--url "$rabbit_url" --user guest --password guest); fi
    "$work/sbbench" "${plain[@]}" --address "${soak_prefix}soakprobe" --mode receive-delete --count "$queued" \
      --timeout "$timeout" --label "$1-drain" >/dev/null 2>&1 || true
  fi
}

soak_rows=""   # t | completed/s | store bytes | WAL bytes | RSS kB, one line per interval
soak_prev=""   # pg_snapshot at the start of the interval
soak_interval=0
soak_row() {  # broker "LINE from sbbench"
  local broker=$1 line=$2 k v t="" sent="" done_="" sms="" cms="" queued="" cur brief store="-" wal="-" rss vac wait
  local -a kv; read -ra kv <<<"${line#* soak }"
  for k in "${kv[@]}"; do
    v=${k#*=}
    case $k in
      t=*) t=$v ;; sent/s=*) sent=$v ;; completed/s=*) done_=$v ;;
      send_ms=*) sms=$v ;; complete_ms=*) cms=$v ;; queued=*) queued=$v ;;
    esac
  done
  # This interval's samples end here; the next interval's start.
  soak_interval=$((soak_interval + 1))
  pg_watch_end
  pg_snapshot; cur=$pg_answer
  pg_watch_begin "$work/soak.samples.$((soak_interval + 1))"
  IFS='|' read -r vac wait <<<"$(pg_samples_brief "$work/soak.samples.$soak_interval")"
  if [ "$broker" = sbemu ]; then rss=$(rss_kb "$pid"); else rss=$(rss_kb "${beam_pid:-0}"); fi
  local -a a b
  IFS='|' read -ra a <<<"$cur"; IFS='|' read -ra b <<<"$soak_prev"
  if [ "$broker" = sbemu ] && [ ${#a[@]} -ge 12 ] && [ ${#b[@]} -ge 12 ]; then
    store=$(awk -v h="${a[9]}" -v i="${a[10]}" -v s="${a[11]}" 'BEGIN{printf "%.1f + %.1f + %.1f", h/1048576, i/1048576, s/1048576}')
    wal=$(awk -v w=$((a[0] - b[0])) 'BEGIN{printf "%.1f", w/1048576}')
    soak_rows+="$t|$done_|$((a[9] + a[10] + a[11]))|$((a[0] - b[0]))|$rss"$'\n'
  else
    vac="-"; wait="-"
    soak_rows+="$t|$done_|-|-|$rss"$'\n'
  fi
  soak_prev=$cur
  printf '  %5s %8s %8s %17s %17s %8s %22s %8s %7.1f %7s  %s\n' "$(awk -v t="$t" 'BEGIN{printf "%.4g", t/60}')" \
    "$sent" "$done_" "$sms" "$cms" "$queued" "$store" "$wal" "$(awk -v r="$rss" 'BEGIN{print r/1024}')" "$vac" "$wait"
}

# The summary line, against issue 22's targets.
soak_summary() {  # broker rate
  printf '%s' "$soak_rows" | awk -F'|' -v broker="$1" -v rate="$2" -v mins="$soak_minutes" '
    { n++; t[n] = $1; c[n] = $2; st[n] = $3; w[n] = $4; r[n] = $5; sum += $2 }
    END {
      if (n == 0) { printf "soak %s: no interval was reported\n", broker; exit }
      mean = sum / n; lo = hi = 0
      for (i = 1; i <= n; i++) { d = mean > 0 ? 100 * (c[i] - mean) / mean : 0; if (d < lo) lo = d; if (d > hi) hi = d }
      out = sprintf("soak %s at %d msg/s for %d min: completed %.0f/s on average, intervals %+.1f %%..%+.1f %% off it (target: within 20 %%)",
                    broker, rate, mins, mean, lo, hi)
      # the base: the last interval to end by minute 5 if the soak goes on after it, else the first
      base = 1; if (t[n] > 300) for (i = 1; i <= n; i++) if (t[i] <= 300) base = i
      if (st[n] != "-") {
        wlo = whi = w[base]
        for (i = base; i <= n; i++) { if (w[i] < wlo) wlo = w[i]; if (w[i] > whi) whi = w[i] }
        out = out sprintf("; messages+idx+toast %.1f MB at minute %g -> %.1f MB at the end; WAL per interval from minute %g: %.1f-%.1f MB",
                          st[base] / 1048576, t[base] / 60, st[n] / 1048576, t[base] / 60, wlo / 1048576, whi / 1048576)
      }
      rmax = 0; for (i = 1; i <= n; i++) if (r[i] > rmax) rmax = r[i]
      out = out sprintf("; %s RSS %.1f MB at minute %g -> %.1f MB at the end (peak %.1f)",
                        broker == "sbemu" ? "sbemu" : "beam.smp", r[base] / 1024, t[base] / 60, r[n] / 1024, rmax / 1024)
      print out
    }'
}

soak_run() {  # broker
  local broker=$1 rate=$soak_rate rc=0 total="" line s0 s1 t0 t1
  soak_broker_args "$broker"
  echo "soak: $broker"
  if [ -z "$rate" ]; then
    soak_find_rate "$broker"
    if [ -z "$soak_best" ]; then echo "  soak $broker: the unthrottled run failed, no soak"; return; fi
    rate=$((soak_best * soak_share / 100))
    echo "  best sustained rate $soak_best msg/s (the lower of the send and complete rates, $soak_probe_s s" \
         "unthrottled); the soak runs at $soak_share % of it: $rate msg/s"
  fi
  quiesce
  soak_rows=""; soak_interval=0
  pg_snapshot; soak_prev=$pg_answer
  echo "  $broker: $rate msg/s for $soak_minutes min, a line every $soak_every_s s (latencies in ms, p50/p99)"
  printf '  %5s %8s %8s %17s %17s %8s %22s %8s %7s %7s  %s\n' min sent/s done/s send complete queued \
    "messages+idx+toast MB" "WAL MB" "RSS MB" vacuum "top wait"
  cpu_ticks "${pg_probe_backend:-0}"; s0=$((ticks + pg_loop_ticks_all)); cpu_ticks "${PGPROBE_PID:-0}"; s0=$((s0 + ticks))
  t0=$EPOCHREALTIME
  pg_watch_begin "$work/soak.samples.1"
  # sbbench's lines are read as they come, through a fifo (so that its exit
  # status can be waited for: soak_row starts sampling loops in the background).
  local fifo="$work/soak.lines" sb
  rm -f "$fifo"; mkfifo "$fifo"
  "$work/sbbench" "${soak_args[@]}" --address "${soak_prefix}soak" --mode soak --rate "$rate" \
    --duration $((soak_minutes * 60)) --report-every "$soak_every_s" --timeout "$timeout" --label "$broker" \
    > "$fifo" 2>&1 &
  sb=$!
  while IFS= read -r line; do
    case $line in
      "$broker soak "*) soak_row "$broker" "$line" ;;
      "$broker mode=soak "*) total=$line ;;
      *) printf '  %s\n' "$line" ;;
    esac
  done < "$fifo"
  wait "$sb" || rc=$?
  rm -f "$fifo"
  pg_watch_end
  cpu_ticks "${pg_probe_backend:-0}"; s1=$((ticks + pg_loop_ticks_all)); cpu_ticks "${PGPROBE_PID:-0}"; s1=$((s1 + ticks))
  t1=$EPOCHREALTIME
  [ -z "$total" ] || echo "  $total"
  [ $rc = 0 ] || echo "  soak $broker: sbbench exited $rc (1: protocol error, 2: timeout; the reason is above)"
  soak_summary "$broker" "$rate"
  awk -v s=$((s1 - s0)) -v hz="$clk_tck" -v a="$t0" -v b="$t1" -v ms="$sample_ms" \
    'BEGIN { printf "  (the sampler, every %d ms: %.2f s of CPU = %.2f %% of one core)\n", ms, s / hz, (b > a ? 100 * s / hz / (b - a) : 0) }'
}
