/* Embedded PostgreSQL: what sbemu runs when no --postgres is given.
 *
 * Layout under <data-dir>/pg (owned by the user postgres runs as, mode 0700):
 *   data/          the cluster (initdb -U sbemu --auth=trust -E UTF8 --no-locale),
 *                  made in data.initdb/ and renamed, so data/ exists only when
 *                  initdb finished
 *   data/sbemu.conf  our settings, rewritten at each start and included from
 *                  postgresql.conf (so `pg_ctl -D data start` by hand behaves the same)
 *   run/           the unix socket directory (0700); when <data-dir>/pg/run is too
 *                  long for a socket path (108 bytes), /tmp/sbemu-<hash of pg dir>
 *   postgres.log   output of initdb, pg_ctl and the server
 *   sbemu.lock     flock held by the sbemu that owns the cluster
 *
 * The server listens on the unix socket only (listen_addresses = ''), port 5432
 * names the socket file and clashes with nothing. Authentication is trust:
 * the socket directory's permissions are the access control. fsync stays on.
 *
 * Users. PostgreSQL refuses to run as root. Run as root, sbemu runs initdb,
 * pg_ctl and the server as the owner of an existing data/ (if not root) or
 * else as the `postgres` user (Debian's postgresql-common creates it), switching
 * with fork + setgid/setuid + exec; <data-dir>/pg is chowned to that user. Every
 * directory above <data-dir>/pg must be searchable by that user: if one is not
 * (a data dir under /root, which is 0700), start fails naming the directory; it
 * never moves the cluster elsewhere behind the user's back. Run as anyone else,
 * sbemu runs PostgreSQL as itself. sbemu itself connects over the socket as the
 * database superuser `sbemu` (root may enter the 0700 socket directory).
 *
 * Crashes. If sbemu was killed (even SIGKILL) and left its postmaster running,
 * the next start finds postmaster.pid, sees that process alive and answering on
 * our socket, and adopts it: it is stopped at exit as if we had started it. If the
 * postmaster died too, the pid file is stale and pg_ctl start copes (crash
 * recovery from WAL); sbemu never deletes postmaster.pid itself. If the pid in
 * the file now belongs to some other program, start fails and says so.
 * Two sbemu processes cannot share one embedded cluster: the second fails with
 * "in use" (point several emulators at one database with --postgres instead).
 *
 * Child processes: start and stop wait for their children with waitpid, so
 * SIGCHLD must not be set to SIG_IGN. Children get no file descriptor of
 * sbemu's beyond 0-2 (/dev/null and the log). */
#ifndef EMU_PGEMBED_H
#define EMU_PGEMBED_H

#include <stddef.h>
#include <sys/types.h>

#define EMU_PGEMBED_PATH_MAX 4096
/* Names the socket file .s.PGSQL.5432; the socket directory is private. */
#define EMU_PGEMBED_PORT 5432
#define EMU_PGEMBED_DB "sbemu"
#define EMU_PGEMBED_USER "sbemu"

/* Filled by emu_pgembed_start, released by emu_pgembed_stop; holds no heap
 * memory, only a lock file descriptor. Calling stop on a zeroed struct is a no-op. */
typedef struct emu_pgembed {
    int active;                        /* start succeeded and stop has not run */
    int lock_fd;                       /* flock on pgdir/sbemu.lock; valid when active */
    int adopted;                       /* found an orphaned postmaster and reused it */
    pid_t postmaster_pid;              /* from postmaster.pid once running */
    uid_t uid;                         /* the user PostgreSQL runs as */
    gid_t gid;
    int switch_user;                   /* uid differs from ours (we are root) */
    char user[64];                     /* its name, for messages */
    char bindir[EMU_PGEMBED_PATH_MAX]; /* initdb, pg_ctl, postgres */
    char pgdir[EMU_PGEMBED_PATH_MAX];  /* absolute <data-dir>/pg */
    char pgdata[EMU_PGEMBED_PATH_MAX]; /* pgdir/data */
    char sockdir[EMU_PGEMBED_PATH_MAX];
    char logfile[EMU_PGEMBED_PATH_MAX];
} emu_pgembed;

/* Creates (first time), starts or adopts the cluster for data_dir (created if
 * missing; relative paths are resolved now), makes database "sbemu" if missing,
 * and writes a PostgreSQL conninfo for it into conninfo, e.g.
 *   host='/work/.sbemu/pg/run' port=5432 user=sbemu dbname=sbemu
 * Returns 0, or -1 with one line in err (for a failed server start, the FATAL
 * line of postgres.log). About 0.2 s when the cluster exists; initdb adds ~1 s. */
int emu_pgembed_start(emu_pgembed *pg, const char *data_dir, char *conninfo, size_t conninfo_len, char *err,
                      size_t errlen);

/* After a lost connection: if the postmaster is gone (killed, crashed, out
 * of disk), starts it again, waiting for crash recovery; if it runs, does
 * nothing. Blocking (seconds, if WAL is replayed); the recovery thread calls
 * it (emu_recover.c) while the loop serves. Returns 0, or -1 with err. */
int emu_pgembed_revive(emu_pgembed *pg, char *err, size_t errlen);

/* Stops the server (pg_ctl -m fast stop: clients are disconnected, in-flight
 * transactions roll back, committed data is safe) and releases the lock. */
void emu_pgembed_stop(emu_pgembed *pg);

#endif
