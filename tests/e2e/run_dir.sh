# Sourced by the e2e runners (run.sh and each SDK's DIR/run.sh). Everything a
# run creates lives under one directory, so that whatever a killed suite leaves
# running (sbemu, its embedded postmaster) can be found and stopped.
#   e2e_run_dir NAME   makes RUN_DIR (/tmp/NAME.XXXXXX), exported as TMPDIR
#   reap               kills what still runs under RUN_DIR

e2e_run_dir() {
  RUN_DIR=$(mktemp -d "/tmp/$1.XXXXXX")
  chmod 755 "$RUN_DIR" # the embedded PostgreSQL runs as the postgres user
  export TMPDIR=$RUN_DIR
}

reap() {
  local pid pidfile
  for pid in $(pgrep -f -- "--data-dir $RUN_DIR/" || true); do kill -KILL "$pid" 2>/dev/null || true; done
  while IFS= read -r pidfile; do
    pid=$(head -1 "$pidfile" 2>/dev/null || true)
    [[ $pid =~ ^[0-9]+$ ]] && kill -QUIT "$pid" 2>/dev/null || true
  done < <(find "$RUN_DIR" -name postmaster.pid 2>/dev/null)
}
