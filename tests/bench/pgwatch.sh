# What PostgreSQL and the processes were doing during a timed case, sourced by
# run.sh (which sets pid, beam_pid, work, pgsock, pg_tables, sample_ms).
#
# One psql session (a coprocess) stays open for the whole run, so that asking
# costs neither a connection nor a cold catalog cache (a new psql session reads
# ~900 buffers before its first answer, and would show in the hit ratio):
#   - pg_snapshot: counters before and after a case (WAL position, checkpoints,
#     buffer hits, WAL full-page images, autovacuum runs and sizes of the
#     messages tables);
#   - pg_watch_begin/end: while a case runs, the same session runs one
#     prepared query every sample_ms (a shell loop writes EXECUTE to psql, whose
#     output goes to a file; psql's \watch would need SIGINT to stop, and the
#     cancel it sends raced with the next query): which sbemu backends
#     are busy and on what they wait, what vacuum is doing, whether the
#     checkpointer is writing, and the RSS of sbemu and of beam.smp (read from
#     /proc by the server: the cluster is local, and one query then does it all).
# case_watch_begin/end wrap one case and leave two lines in case_note; their
# cost (the session's backend and psql) is measured and printed with them.
#
# pg_stat_* counters (buffer hits, full-page images, dead rows, autovacuum
# runs) reach the shared statistics only when a backend flushes them: at most
# once a second, at the end of a transaction. sbemu's backend flushes the
# case's last second at its next sweep (every second), measured 0.4-1.9 s
# after the case. So before the first snapshot and after a case of sbemu's,
# pg_settle waits until settle_ms have passed since sbemu last worked (bench()
# stamps sbemu_last_work after every sbbench run against sbemu, fills too).
# The WAL position, checkpoints and sizes are read at once.

pg_probe_log="$work/pgprobe.log"   # anything the session said that was not an answer
pg_answer=""                       # pg_ask's result row, fields split by |
pg_watching=0
pg_can_read_proc=0
clk_tck=$(getconf CLK_TCK)

pg_probe_start() {
  coproc PGPROBE { exec psql -X -q -At -F'|' -v ON_ERROR_STOP=0 -h "$pgsock" -U sbemu sbemu 2>&1; }
  # The sampling loop is a subshell, and a coprocess's descriptors are not
  # inherited: it writes to a copy. And it sleeps in read -t on a pipe nobody
  # writes to, not in a forked sleep.
  exec {pg_probe_in}>&"${PGPROBE[1]}"
  if [ -z "${pg_nap_fd:-}" ]; then exec {pg_nap_fd}<> <(:); fi
  pg_probe_backend=""
  if pg_ask "pg_backend_pid()"; then pg_probe_backend=$pg_answer; fi
  # Superuser reads /proc through the server; without it the RSS columns stay 0.
  if pg_ask "length(pg_read_file('/proc/$pid/status', 0, 4096, true)) > 0" && [ "$pg_answer" = t ]; then
    pg_can_read_proc=1
  fi
  # Prepared once: planning the views' joins every time cost 1.8 ms of the
  # backend per sample, executing the prepared statement 0.4 ms.
  printf '%s;\n' "PREPARE pgwatch_sample AS $(pg_sample_query)" >&"${PGPROBE[1]}"
  pg_ask 1 || true
  pg_sample_secs=$(awk -v ms="$sample_ms" 'BEGIN{printf "%.3f", ms / 1000}')
}

sbemu_last_work=0
pg_settle() {
  local w
  w=$(awk -v l="$sbemu_last_work" -v now="$EPOCHREALTIME" -v ms="$settle_ms" 'BEGIN{w = l + ms / 1000 - now; print (w > 0 ? w : 0)}')
  [ "$w" = 0 ] || sleep "$w"
}

pg_probe_alive() { [ -n "${PGPROBE_PID:-}" ] && kill -0 "$PGPROBE_PID" 2>/dev/null; }

# Runs SELECT <expressions>; its one row goes to pg_answer. 1 if there was
# none (an error, written to pg_probe_log).
pg_ask() {
  pg_answer=""
  pg_probe_alive || return 1
  printf "SELECT 'ans', %s;\nSELECT 'end';\n" "$1" >&"${PGPROBE[1]}"
  local line got=1
  while IFS= read -r -t 60 line <&"${PGPROBE[0]}"; do
    case $line in
      ans\|*) pg_answer=${line#ans|}; got=0 ;;
      end) return $got ;;
      "") ;;
      *) echo "$line" >> "$pg_probe_log" ;;
    esac
  done
  return 1
}

# One row per sample: s | busy client backends' waits (CPU: none, running) |
# vacuums as table:phase | the checkpointer's wait (CheckpointerMain: idle) |
# sbemu's VmRSS kB | beam.smp's VmRSS kB.
pg_sample_query() {
  local rss_sbemu=0 rss_peer=0
  if [ "$pg_can_read_proc" = 1 ]; then
    rss_sbemu="coalesce(substring(pg_read_file('/proc/$pid/status', 0, 4096, true) from 'VmRSS:\\s*(\\d+)'), '0')"
    if [ -n "${beam_pid:-}" ]; then
      rss_peer="coalesce(substring(pg_read_file('/proc/$beam_pid/status', 0, 4096, true) from 'VmRSS:\\s*(\\d+)'), '0')"
    fi
  fi
  cat <<SQL
SELECT 's',
 coalesce((SELECT string_agg(CASE WHEN a.state LIKE 'idle in transaction%' THEN 'IdleInTransaction'
                                  ELSE coalesce(a.wait_event_type || ':' || a.wait_event, 'CPU') END, ' ')
           FROM pg_stat_activity a
           WHERE a.backend_type = 'client backend' AND a.pid <> pg_backend_pid() AND a.state <> 'idle'), '-'),
 coalesce((SELECT string_agg(coalesce(o.relname || '.toast', c.relname) || ':' || replace(v.phase, ' ', '_'), ' ')
           FROM pg_stat_progress_vacuum v JOIN pg_class c ON c.oid = v.relid
           LEFT JOIN pg_class o ON o.reltoastrelid = v.relid), '-'),
 coalesce((SELECT coalesce(wait_event, 'CPU') FROM pg_stat_activity WHERE backend_type = 'checkpointer'), '-'),
 $rss_sbemu, $rss_peer
SQL
}

# Counters at one moment: wal bytes | checkpoints timed | requested | buffers
# written by checkpoints | blks_hit | blks_read | WAL full-page images |
# autovacuum runs | dead rows | heap bytes | index bytes | TOAST bytes, the
# last five over every table LIKE pg_tables (message%).
pg_snapshot() {  # -> pg_answer ("" if the session failed)
  pg_ask "(pg_current_wal_lsn() - '0/0')::bigint, b.checkpoints_timed, b.checkpoints_req, b.buffers_checkpoint,
          d.blks_hit, d.blks_read, w.wal_fpi, t.autovacuums, t.dead, t.heap, t.idx, t.toast
   FROM pg_stat_bgwriter b, pg_stat_wal w, pg_stat_database d,
        (SELECT coalesce(sum(s.autovacuum_count), 0) AS autovacuums, coalesce(sum(s.n_dead_tup), 0) AS dead,
                coalesce(sum(pg_table_size(c.oid) - coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)), 0) AS heap,
                coalesce(sum(pg_indexes_size(c.oid)), 0) AS idx,
                coalesce(sum(pg_total_relation_size(nullif(c.reltoastrelid, 0))), 0) AS toast
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
         WHERE c.relkind = 'r' AND n.nspname = 'public' AND c.relname LIKE '$pg_tables') t
   WHERE d.datname = current_database()" || pg_answer=""
}

# Starts sampling into FILE and returns once the first sample is in. That
# first sample is taken before the case and left out of the figures.
pg_loop_pid=""
pg_watch_begin() {  # file
  : > "$1"
  [ "$sample_ms" -gt 0 ] || return 0
  pg_probe_alive || pg_probe_start  # in case psql ended
  pg_probe_alive || return 0
  printf '%s\n' "\\o $1" >&"${PGPROBE[1]}"
  ( while :; do
      printf 'EXECUTE pgwatch_sample;\n' >&"$pg_probe_in" || exit 0
      read -r -t "$pg_sample_secs" -u "$pg_nap_fd" || true
    done ) &
  pg_loop_pid=$!
  pg_watching=1
  local i
  for i in $(seq 500); do [ -s "$1" ] && break; sleep 0.01; done
}

# Stops the loop (a write is one line, whole or not at all) and waits until
# psql has answered everything sent before, its output back on the pipe.
pg_loop_ticks=0        # the last loop's CPU, read just before it ended
pg_loop_ticks_all=0    # every loop's so far
pg_watch_end() {
  pg_loop_ticks=0
  [ "$pg_watching" = 1 ] || return 0
  pg_watching=0
  cpu_ticks "$pg_loop_pid"; pg_loop_ticks=$ticks; pg_loop_ticks_all=$((pg_loop_ticks_all + ticks))
  kill -TERM "$pg_loop_pid" 2>/dev/null || true
  wait "$pg_loop_pid" 2>/dev/null || true
  pg_loop_pid=""
  printf '%s\n' '\o' >&"${PGPROBE[1]}"
  pg_ask 1 || true
}

# ---- processes: CPU from /proc/PID/stat, in clock ticks ----
ticks=0
cpu_ticks() {  # pid [all: with reaped children] -> ticks (0 if it is gone)
  local line; local -a f; ticks=0
  { IFS= read -r line < "/proc/$1/stat"; } 2>/dev/null || return 0
  line=${line##*) }; read -ra f <<<"$line"
  ticks=$((f[11] + f[12]))
  if [ "${2-}" = all ]; then ticks=$((ticks + f[13] + f[14])); fi
}
# PostgreSQL as a whole: the postmaster, its children now, and those it has
# reaped (an autovacuum worker that ended during the case is in there).
pg_ticks=0
pg_cpu_ticks() {
  local pm kids k t
  pm=$(head -1 "$work/data/pg/data/postmaster.pid" 2>/dev/null || true)
  pg_ticks=0; [ -n "$pm" ] || return 0
  cpu_ticks "$pm" all; t=$ticks
  kids=""; { read -r kids < "/proc/$pm/task/$pm/children"; } 2>/dev/null || true
  for k in $kids; do cpu_ticks "$k"; t=$((t + ticks)); done
  pg_ticks=$t
}
rss_kb() {  # pid -> VmRSS in kB on stdout (0 if gone)
  awk '/^VmRSS/{print $2; f=1} END{if (!f) print 0}' "/proc/$1/status" 2>/dev/null || echo 0
}

# ---- one case ----
case_note=""
sampler_ticks_total=0 sampler_secs_total=0   # the sampler's CPU over all timed cases, and their time
declare -A cw   # the figures at the start of the case under way
case_watch_begin() {  # broker (sbemu, rabbitmq or raw)
  cw[broker]=$1; cw[samples]="$work/samples.$1"
  pg_settle
  pg_snapshot; cw[snap]=$pg_answer   # before the \watch: the session answers one thing at a time
  pg_watch_begin "${cw[samples]}"
  cpu_ticks "$pid"; cw[sbemu]=$ticks
  cw[peer]=0; if [ -n "${beam_pid:-}" ]; then cpu_ticks "$beam_pid"; cw[peer]=$ticks; fi
  pg_cpu_ticks; cw[pg]=$pg_ticks
  cw[probe]=0; if [ -n "${pg_probe_backend:-}" ]; then cpu_ticks "$pg_probe_backend"; cw[probe]=$ticks; fi
  cw[psql]=0; if [ -n "${PGPROBE_PID:-}" ]; then cpu_ticks "$PGPROBE_PID"; cw[psql]=$ticks; fi
  cw[rss_sbemu]=$(rss_kb "$pid"); cw[rss_peer]=0
  if [ -n "${beam_pid:-}" ]; then cw[rss_peer]=$(rss_kb "$beam_pid"); fi
  cw[t0]=$EPOCHREALTIME
}

# The client's CPU seconds in the case (sbbench's cpu=, the raw line's psql
# sessions): set before case_watch_end; "" when not known.
case_client_secs=""
# CPU seconds PostgreSQL spent starting the raw line's backends, left out of
# its figure (set before case_watch_end; "" when none).
case_pg_starts_secs=""
# What the case cost the machine, every process of its line (the broker, PostgreSQL, the client; not the
# sampler): CPU seconds, set by case_watch_end ("" without the client's).
case_cpu_secs=""
case_watch_end() {  # -> case_note: the pg line and the cpu line; case_cpu_secs
  local t1=$EPOCHREALTIME sbemu peer pgt probe psqlt rss_sbemu rss_peer
  cpu_ticks "$pid"; sbemu=$((ticks - cw[sbemu]))
  peer=0; if [ -n "${beam_pid:-}" ]; then cpu_ticks "$beam_pid"; peer=$((ticks - cw[peer])); fi
  probe=0; if [ -n "${pg_probe_backend:-}" ]; then cpu_ticks "$pg_probe_backend"; probe=$((ticks - cw[probe])); fi
  psqlt=0; if [ -n "${PGPROBE_PID:-}" ]; then cpu_ticks "$PGPROBE_PID"; psqlt=$((ticks - cw[psql])); fi
  pg_cpu_ticks; pgt=$((pg_ticks - cw[pg] - probe))
  if [ -n "$case_pg_starts_secs" ]; then
    pgt=$(awk -v t="$pgt" -v s="$case_pg_starts_secs" -v hz="$clk_tck" 'BEGIN{t -= s * hz; printf "%.0f", (t > 0 ? t : 0)}')
  fi
  case_cpu_secs=""
  if [ -n "$case_client_secs" ]; then
    case_cpu_secs=$(awk -v t=$((sbemu + peer + pgt)) -v hz="$clk_tck" -v c="$case_client_secs" 'BEGIN{printf "%.3f", t / hz + c}')
  fi
  pg_watch_end
  psqlt=$((psqlt + pg_loop_ticks))
  rss_sbemu=$(rss_kb "$pid"); rss_peer=0
  if [ -n "${beam_pid:-}" ]; then rss_peer=$(rss_kb "$beam_pid"); fi
  pg_snapshot
  local after=$pg_answer
  if [ "${cw[broker]}" = sbemu ] && [ "$settle_ms" -gt 0 ] && [ -n "$after" ]; then
    # The flushed counters (fields 5-9) once sbemu's backend has flushed them.
    sbemu_last_work=$t1
    pg_settle
    pg_snapshot
    if [ -n "$pg_answer" ]; then
      local -a x y; IFS='|' read -ra x <<<"$after"; IFS='|' read -ra y <<<"$pg_answer"
      x[4]=${y[4]}; x[5]=${y[5]}; x[6]=${y[6]}; x[7]=${y[7]}; x[8]=${y[8]}
      after=$(IFS='|'; echo "${x[*]}")
    fi
  fi
  sampler_ticks_total=$((sampler_ticks_total + probe + psqlt))
  sampler_secs_total=$(awk -v a="$sampler_secs_total" -v t0="${cw[t0]}" -v t1="$t1" 'BEGIN{print a + t1 - t0}')
  case_note=$(pg_case_lines "${cw[broker]}" "${cw[snap]}" "$after" "${cw[samples]}" "${cw[t0]}" "$t1" \
    "$sbemu" "$peer" "$pgt" "$((probe + psqlt))" "${cw[rss_sbemu]}" "$rss_sbemu" "${cw[rss_peer]}" "$rss_peer" \
    "$case_client_secs" "$case_pg_starts_secs")
  case_client_secs=""; case_pg_starts_secs=""
}

# The two lines under a case's result:
#   pg: WAL written (and full-page images in it), checkpoints (completed in the
#       case, buffers they wrote, share of samples with the checkpointer busy),
#       vacuum (share of samples with a vacuum running, per table, and its most
#       seen phase), waits of busy sbemu backends (share of busy-backend samples;
#       busy = busy backends per sample on average), buffer hit ratio, and the
#       messages tables at the end (heap + indexes + TOAST, dead rows, autovacuum runs);
#   cpu: CPU seconds of the broker, of PostgreSQL (less the sampler's) and of
#       the client (sbbench, or the raw line's psql sessions), the broker's RSS
#       before -> after (peak seen), and the sampler's CPU (psql and its
#       backend; clock ticks of 10 ms: pg_sampler_total puts it in proportion
#       over the run).
pg_case_lines() {  # broker before after samples t0 t1 sbemu_ticks peer_ticks pg_ticks sampler_ticks rss... client_secs starts_secs
  awk -F'|' -v broker="$1" -v before="$2" -v after="$3" -v t0="$5" -v t1="$6" \
      -v sbemu="$7" -v peer="$8" -v pgt="$9" -v sampler="${10}" \
      -v rs0="${11}" -v rs1="${12}" -v rp0="${13}" -v rp1="${14}" -v client="${15-}" -v starts="${16-}" -v hz="$clk_tck" -v ms="$sample_ms" '
    function mb(b) { return b < 0.05 * 1048576 ? "0" : sprintf(b >= 100 * 1048576 ? "%.0f MB" : "%.1f MB", b / 1048576) }
    function pct(a, b) { return b > 0 ? sprintf("%.0f%%", 100 * a / b) : "-" }
    function secs(t) { return sprintf("%.2f s", t / hz) }
    # the keys of arr by count, highest first, at most k, as "key N%" of total
    function top(arr, total, k,   out, best, key, i, n) {
      out = ""
      for (i = 0; i < k; i++) {
        best = ""; n = 0
        for (key in arr) if (arr[key] > n) { n = arr[key]; best = key }
        if (best == "") break
        out = out (out == "" ? "" : ", ") best " " pct(n, total)
        delete arr[best]
      }
      return out
    }
    NR == 1 { next }                 # taken before the case began
    $1 == "s" {
      n++
      if ($2 != "-") { k = split($2, w, " "); for (i = 1; i <= k; i++) { wait[w[i]]++; busy++ } }
      if ($3 != "-") {
        k = split($3, v, " ")
        for (i = 1; i <= k; i++) { split(v[i], rp, ":"); vac[rp[1]]++; phase[rp[1]] = phase[rp[1]] " " rp[2] }
      }
      # a checkpoint under way: spread over checkpoint_completion_target, it
      # mostly sleeps (CheckpointWriteDelay); anything else is writing or syncing
      if ($4 != "-" && $4 != "CheckpointerMain") { ckpt_on++; if ($4 != "CheckpointWriteDelay") ckpt_io++ }
      if ($5 + 0 > peak_s) peak_s = $5 + 0
      if ($6 + 0 > peak_p) peak_p = $6 + 0
    }
    END {
      wall = t1 - t0
      if (split(before, b, "|") < 12 || split(after, a, "|") < 12) {
        pg = "pg: (no figures: the psql session did not answer; what it said is printed at the end)"
      } else {
        ck = (a[2] - b[2]) + (a[3] - b[3])
        pg = sprintf("pg: wal %s (fpi %d)", mb(a[1] - b[1]), a[7] - b[7])
        on = n > 0 && ckpt_on > 0 ? sprintf("under way %s, writing %s", pct(ckpt_on, n), pct(ckpt_io, n)) : ""
        if (ck > 0) pg = pg sprintf(", ckpt %d done (%d timed, %d req, %d buf%s)", ck, a[2] - b[2], a[3] - b[3],
                                    a[4] - b[4], on == "" ? "" : "; " on)
        else pg = pg ", ckpt 0 done" (on == "" ? "" : " (" on ")")
        vs = ""
        for (t in vac) {
          # the phase seen most often for this table
          m = split(phase[t], ph, " "); delete pc; bestp = ""; bn = 0
          for (i = 1; i <= m; i++) if (++pc[ph[i]] > bn) { bn = pc[ph[i]]; bestp = ph[i] }
          gsub("_", " ", bestp)
          vs = vs (vs == "" ? "" : ", ") t " " pct(vac[t], n) " (" bestp ")"
        }
        pg = pg ", vacuum " (vs == "" ? "-" : vs)
        if (ms == 0) pg = pg ", waits: - (sampling off)"
        else if (n == 0) pg = pg sprintf(", waits: - (no sample: the case was shorter than %d ms)", ms)
        else if (busy == 0) pg = pg ", waits: - (no busy backend)"
        else pg = pg sprintf(", waits: %s (busy %.2f)", top(wait, busy, 4), busy / n)
        hit = a[5] - b[5]; rd = a[6] - b[6]
        pg = pg ", hit " (hit + rd > 0 ? sprintf("%.1f%%", 100 * hit / (hit + rd)) : "-")
        pg = pg sprintf(", messages %s + idx %s + toast %s (dead %d, autovacuum %+d)",
                        mb(a[10]), mb(a[11]), mb(a[12]), a[9], a[8] - b[8])
        pg = pg sprintf(", %d samples", n)
      }
      cl = client == "" ? "" : sprintf(", client %.2f s", client)
      if (broker == "sbemu")
        cpu = sprintf("cpu: sbemu %s, postgres %s%s; sbemu rss %.1f -> %.1f MB (peak %.1f)", secs(sbemu), secs(pgt), cl,
                      rs0 / 1024, rs1 / 1024, (peak_s > rs1 ? (peak_s > rs0 ? peak_s : rs0) : (rs1 > rs0 ? rs1 : rs0)) / 1024)
      else if (broker == "rabbitmq")
        cpu = sprintf("cpu: rabbitmq %s, postgres %s, sbemu %s%s; beam.smp rss %.1f -> %.1f MB (peak %.1f)", secs(peer),
                      secs(pgt), secs(sbemu), cl, rp0 / 1024, rp1 / 1024,
                      (peak_p > rp1 ? (peak_p > rp0 ? peak_p : rp0) : (rp1 > rp0 ? rp1 : rp0)) / 1024)
      else
        cpu = sprintf("cpu: postgres %s%s, sbemu %s%s", secs(pgt),
                      starts == "" ? "" : sprintf(" (less %.2f s starting its backends)", starts), secs(sbemu), cl)
      cpu = cpu sprintf("; sampler %s over %.2f s", secs(sampler), wall)
      print "  " pg
      print "  " cpu
    }' "$4"
}

# The soak's per-interval view of a samples file: "vacuum share|busiest wait share".
pg_samples_brief() {  # file
  awk -F'|' 'NR == 1 { next }
    $1 == "s" { n++; if ($3 != "-") vac++
                if ($2 != "-") { k = split($2, w, " "); for (i = 1; i <= k; i++) { c[w[i]]++; busy++ } } }
    END { bn = 0; for (x in c) if (c[x] > bn) { bn = c[x]; best = x }
          printf "%s|%s\n", n ? sprintf("%.0f%%", 100 * vac / n) : "-", busy ? sprintf("%s %.0f%%", best, 100 * bn / busy) : "-" }' "$1"
}

# One line for the end of the run: what the sampler cost over every timed case.
pg_sampler_total() {
  [ "$sample_ms" -gt 0 ] || return 0
  awk -v t="$sampler_ticks_total" -v s="$sampler_secs_total" -v hz="$clk_tck" -v ms="$sample_ms" 'BEGIN {
    if (s > 0) printf "the sampler (every %d ms): %.2f s of CPU over %.1f s of timed cases = %.2f %% of one core\n",
                      ms, t / hz, s, 100 * t / hz / s }'
}
