/* Embedded PostgreSQL launcher (see emu_pgembed.h for the layout and the rules). */
#include "emu_pgembed.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu_fs.h"
#include "ent_log.h"
#include "ent_status.h"
#include "store_setup.h"

#define PG_DEFAULT_BINDIR "/usr/lib/postgresql/15/bin"
#define PG_BINDIR_GLOB_ROOT "/usr/lib/postgresql"
#define PG_RUN_USER "postgres"
/* sun_path is 108 bytes with its NUL; the socket file is <dir>/.s.PGSQL.5432. */
#define SOCKET_PATH_MAX 107
#define SOCKET_FILE_LEN (sizeof "/.s.PGSQL.5432" - 1)
#define START_TIMEOUT_S "60"     /* crash recovery after a kill may replay WAL */
#define STOP_TIMEOUT_S "60"
#define ADOPT_WAIT_MS 10000      /* an orphan still starting up or recovering */
/* After a postmaster is killed -9, PostgreSQL refuses to start while the dead
 * postmaster is an unreaped zombie (its pid still "exists") or its orphaned
 * backends still hold shared memory. Both clear up by themselves (some inits
 * reap only every second or two), so keep retrying for a while. */
#define START_RETRY_WINDOW_MS 15000
#define START_RETRY_MS 300
/* glibc's malloc in the embedded server's processes. A store batch is up to
 * 2 MB of bodies (STORE_BATCH_MAX_BYTES), which a backend receives, parses
 * into an array and unnests: several allocations of megabytes per batch.
 * glibc maps those fresh (or gives the heap's top back after each batch and
 * grows it again): a perf of 64 KiB sends found 12 % of the backend's
 * samples in page faults and the kernel zeroing pages. Kept in the heap
 * below 8 MB, and up to 32 MB of free heap kept, the memory is reused:
 * 64 KiB sends ran at 3,124-3,296 msg/s against 2,634-3,185, with 44-47
 * instead of 48-62 ticks of PostgreSQL's CPU per 2,000 (A/B of alternating
 * fresh emulators). What a backend keeps is what its largest batch used. */
#define PG_MALLOC_MMAP_THRESHOLD "MALLOC_MMAP_THRESHOLD_=8388608"
#define PG_MALLOC_TRIM_THRESHOLD "MALLOC_TRIM_THRESHOLD_=33554432"

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* dir + suffix into out; -1 if it does not fit. Every path we build is checked
 * through here, so a long --data-dir is refused instead of silently cut. */
static int path_join(char *out, size_t len, const char *dir, const char *suffix)
{
    int n = snprintf(out, len, "%s%s", dir, suffix);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int is_exec(const char *dir, const char *name)
{
    char p[EMU_PGEMBED_PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, X_OK) == 0;
}

static int is_bindir(const char *dir)
{
    return is_exec(dir, "initdb") && is_exec(dir, "pg_ctl") && is_exec(dir, "postgres");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static uint64_t fnv1a64(const char *s)
{
    uint64_t h = 14695981039346656037ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* ---- finding the binaries ---- */

static int pg_config_bindir(char *out, size_t len, int want_major)
{
    FILE *p = popen("pg_config --bindir --version 2>/dev/null", "r");
    if (!p)
        return -1;
    char dir[EMU_PGEMBED_PATH_MAX] = "", ver[128] = "";
    if (!fgets(dir, sizeof dir, p) || !fgets(ver, sizeof ver, p)) {
        pclose(p);
        return -1;
    }
    pclose(p);
    dir[strcspn(dir, "\n")] = '\0';
    int major = 0;
    if (sscanf(ver, "PostgreSQL %d", &major) != 1 || (want_major && major != want_major) || !is_bindir(dir))
        return -1;
    snprintf(out, len, "%s", dir);
    return 0;
}

/* The newest /usr/lib/postgresql/N/bin that holds a server. */
static int newest_bindir(char *out, size_t len)
{
    DIR *d = opendir(PG_BINDIR_GLOB_ROOT);
    if (!d)
        return -1;
    int best = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long v = strtol(e->d_name, &end, 10);
        char dir[EMU_PGEMBED_PATH_MAX];
        if (*end || v <= best || v > 1000)
            continue;
        snprintf(dir, sizeof dir, PG_BINDIR_GLOB_ROOT "/%ld/bin", v);
        if (is_bindir(dir)) {
            best = (int)v;
            snprintf(out, len, "%s", dir);
        }
    }
    closedir(d);
    return best ? 0 : -1;
}

/* An existing cluster needs the server of its own major version; a new one gets
 * 15 if installed, else what pg_config names, else the newest installed. */
static int find_bindir(emu_pgembed *pg, int major, char *err, size_t errlen)
{
    if (major) {
        char dir[64];
        snprintf(dir, sizeof dir, PG_BINDIR_GLOB_ROOT "/%d/bin", major);
        if (is_bindir(dir)) {
            snprintf(pg->bindir, sizeof pg->bindir, "%s", dir);
            return 0;
        }
        if (pg_config_bindir(pg->bindir, sizeof pg->bindir, major) == 0)
            return 0;
        return ent_fail(err, errlen,
                    "postgres: the cluster in %s was made by PostgreSQL %d, whose server is not installed "
                    "(install postgresql-%d, or use another --data-dir)",
                    pg->pgdata, major, major);
    }
    if (is_bindir(PG_DEFAULT_BINDIR)) {
        snprintf(pg->bindir, sizeof pg->bindir, "%s", PG_DEFAULT_BINDIR);
        return 0;
    }
    if (pg_config_bindir(pg->bindir, sizeof pg->bindir, 0) == 0 || newest_bindir(pg->bindir, sizeof pg->bindir) == 0)
        return 0;
    return ent_fail(err, errlen,
                "postgres: no PostgreSQL server found (looked in " PG_DEFAULT_BINDIR ", pg_config --bindir and "
                PG_BINDIR_GLOB_ROOT "/*/bin); install postgresql or give --postgres URL");
}

/* ---- child processes ---- */

static int drop_privileges(const emu_pgembed *pg)
{
    if (!pg->switch_user)
        return 0;
    if (setgroups(1, &pg->gid) < 0 || setgid(pg->gid) < 0 || setuid(pg->uid) < 0)
        return -1;
    return 0;
}

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : 0;
}

/* Runs argv (argv[0] an absolute path) as the PostgreSQL user with a clean
 * environment (and malloc's settings above, which pg_ctl passes on to the
 * server), stdin from /dev/null and output appended to postgres.log.
 * Returns the exit status, or -1 if it could not run. */
static int run(const emu_pgembed *pg, char *const argv[])
{
    char home[EMU_PGEMBED_PATH_MAX + 8];
    char *envp[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", home, PG_MALLOC_MMAP_THRESHOLD, PG_MALLOC_TRIM_THRESHOLD,
                     NULL };
    snprintf(home, sizeof home, "HOME=%s", pg->pgdir);

    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (drop_privileges(pg) < 0)
            _exit(126);
        int nul = open("/dev/null", O_RDONLY);
        int log = open(pg->logfile, O_WRONLY | O_APPEND | O_CREAT, 0600);
        if (nul < 0 || log < 0)
            _exit(126);
        dup2(nul, 0);
        dup2(log, 1);
        dup2(log, 2);
        /* The postmaster outlives us: it must not keep our listening sockets,
         * database connections or the cluster lock. */
        close_range(3, ~0U, 0);
        if (chdir(pg->pgdir) < 0)
            _exit(126);
        execve(argv[0], argv, envp);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* The most telling line that postgres.log gained since offset `from`: the last
 * FATAL/PANIC/error line, else the last non-empty one. */
static void log_reason(const emu_pgembed *pg, off_t from, char *out, size_t len)
{
    snprintf(out, len, "no output");
    FILE *f = fopen(pg->logfile, "r");
    if (!f)
        return;
    if (fseeko(f, from, SEEK_SET) < 0) {
        fclose(f);
        return;
    }
    char line[1024], last[1024] = "", best[1024] = "";
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!line[0])
            continue;
        snprintf(last, sizeof last, "%s", line);
        /* Server lines start with a timestamp and pid: keep from the severity on. */
        const char *sev = strstr(line, "FATAL:");
        if (!sev)
            sev = strstr(line, "PANIC:");
        if (sev || strstr(line, "error"))
            snprintf(best, sizeof best, "%s", sev ? sev : line);
    }
    fclose(f);
    if (best[0] || last[0])
        snprintf(out, len, "%s", best[0] ? best : last);
}

/* ---- users, directories, lock ---- */

static int choose_user(emu_pgembed *pg, char *err, size_t errlen)
{
    struct stat st;
    struct passwd *pw;

    if (geteuid() != 0) {
        pg->uid = geteuid();
        pg->gid = getegid();
        pw = getpwuid(pg->uid);
        snprintf(pg->user, sizeof pg->user, "%s", pw ? pw->pw_name : "self");
        return 0;
    }
    /* Root: keep running an existing cluster as whoever made it. */
    if (stat(pg->pgdata, &st) == 0) {
        if (st.st_uid == 0)
            return ent_fail(err, errlen,
                        "postgres: %s is owned by root, and PostgreSQL refuses to run as root "
                        "(chown -R %s it, or use another --data-dir)",
                        pg->pgdata, PG_RUN_USER);
        pw = getpwuid(st.st_uid);
        pg->uid = st.st_uid;
        pg->gid = pw ? pw->pw_gid : st.st_gid;
        snprintf(pg->user, sizeof pg->user, "%s", pw ? pw->pw_name : "?");
        if (!pw)
            snprintf(pg->user, sizeof pg->user, "uid %ld", (long)st.st_uid);
    } else {
        pw = getpwnam(PG_RUN_USER);
        if (!pw)
            return ent_fail(err, errlen,
                        "postgres: PostgreSQL refuses to run as root and there is no '" PG_RUN_USER
                        "' user to run it as (install postgresql, which creates it; or run sbemu as "
                        "another user; or give --postgres URL)");
        pg->uid = pw->pw_uid;
        pg->gid = pw->pw_gid;
        snprintf(pg->user, sizeof pg->user, "%s", pw->pw_name);
    }
    pg->switch_user = pg->uid != geteuid();
    return 0;
}

/* Creates dir 0700 for the PostgreSQL user; an existing one must be a real
 * directory that already belongs to it (matters in /tmp, where anyone could
 * have made it first). */
static int private_dir(const emu_pgembed *pg, const char *dir, int must_be_ours, char *err, size_t errlen)
{
    struct stat st;
    if (mkdir(dir, 0700) == 0) {
        if (pg->switch_user && chown(dir, pg->uid, pg->gid) < 0)
            return ent_fail(err, errlen, "postgres: chown %s: %s", dir, strerror(errno));
        return 0;
    }
    if (errno != EEXIST)
        return ent_fail(err, errlen, "postgres: cannot create %s: %s", dir, strerror(errno));
    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return ent_fail(err, errlen, "postgres: %s exists and is not a directory", dir);
    if (st.st_uid != pg->uid) {
        if (must_be_ours)
            return ent_fail(err, errlen, "postgres: %s belongs to uid %ld, not to %s; remove it", dir,
                        (long)st.st_uid, pg->user);
        if (!pg->switch_user || chown(dir, pg->uid, pg->gid) < 0)
            return ent_fail(err, errlen, "postgres: %s belongs to uid %ld and cannot be given to %s", dir,
                        (long)st.st_uid, pg->user);
    }
    if ((st.st_mode & 077) && must_be_ours)
        return ent_fail(err, errlen, "postgres: %s is mode %04o; it must be 0700", dir, (unsigned)(st.st_mode & 07777));
    return 0;
}

/* Checks, as the PostgreSQL user, that it can reach and use pgdir. A child does
 * the check so that ACLs and group memberships count exactly as they will. */
static int check_reachable(const emu_pgembed *pg, char *err, size_t errlen)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return ent_fail(err, errlen, "postgres: pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return ent_fail(err, errlen, "postgres: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        if (drop_privileges(pg) < 0)
            _exit(2);
        char p[EMU_PGEMBED_PATH_MAX];
        snprintf(p, sizeof p, "%s", pg->pgdir);
        for (char *s = p + 1;; s++) {
            if (*s == '/' || *s == '\0') {
                char c = *s;
                *s = '\0';
                int mode = c ? X_OK : R_OK | W_OK | X_OK;
                if (access(p, mode) < 0) {
                    ssize_t n = write(fds[1], p, strlen(p));
                    (void)n;
                    _exit(1);
                }
                if (!c)
                    break;
                *s = c;
            }
        }
        _exit(0);
    }
    close(fds[1]);
    char bad[EMU_PGEMBED_PATH_MAX] = "";
    ssize_t n = read(fds[0], bad, sizeof bad - 1);
    close(fds[0]);
    bad[n > 0 ? n : 0] = '\0';
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (!bad[0])
        return ent_fail(err, errlen, "postgres: cannot switch to user %s", pg->user);
    struct stat st;
    unsigned mode = stat(bad, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0;
    return ent_fail(err, errlen,
                "postgres: PostgreSQL cannot run as root, so sbemu runs it as '%s', who cannot %s %s "
                "(mode %04o); use a --data-dir that %s can reach (e.g. /var/lib/sbemu), or give --postgres URL",
                pg->user, strcmp(bad, pg->pgdir) == 0 ? "use" : "enter", bad, mode, pg->user);
}

static int take_lock(emu_pgembed *pg, char *err, size_t errlen)
{
    char path[EMU_PGEMBED_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/sbemu.lock", pg->pgdir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return ent_fail(err, errlen, "postgres: cannot open %s: %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        char buf[32] = "";
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        close(fd);
        return ent_fail(err, errlen,
                    "postgres: %s is in use by another sbemu (pid %s); give each emulator its own --data-dir, "
                    "or share one database with --postgres",
                    pg->pgdir, buf[0] ? buf : "?");
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, len, 0) != len)
        LOG_WARN("postgres: cannot write %s: %s", path, strerror(errno));
    pg->lock_fd = fd;
    return 0;
}

static void release_lock(emu_pgembed *pg)
{
    if (pg->lock_fd >= 0)
        close(pg->lock_fd);
    pg->lock_fd = -1;
}

/* The socket directory: <pgdir>/run, or /tmp/sbemu-<hash> when that path would
 * not fit in a unix socket address. */
static int setup_sockdir(emu_pgembed *pg, char *err, size_t errlen)
{
    int must_be_ours = 0;
    if (path_join(pg->sockdir, sizeof pg->sockdir, pg->pgdir, "/run") < 0 || strlen(pg->sockdir) + SOCKET_FILE_LEN > SOCKET_PATH_MAX) {
        snprintf(pg->sockdir, sizeof pg->sockdir, "/tmp/sbemu-%016llx", (unsigned long long)fnv1a64(pg->pgdir));
        must_be_ours = 1;
        LOG_DEBUG("postgres: %s/run is too long for a unix socket; using %s", pg->pgdir, pg->sockdir);
    }
    return private_dir(pg, pg->sockdir, must_be_ours, err, errlen);
}

/* ---- configuration ---- */

/* A postgresql.conf string literal: '...' with ' doubled and \ escaped. */
static void conf_quote(const char *in, char *out, size_t len)
{
    size_t o = 0;
    if (len < 3)
        return;
    out[o++] = '\'';
    for (; *in && o + 4 < len; in++) {
        if (*in == '\'' || *in == '\\')
            out[o++] = *in;
        out[o++] = *in;
    }
    out[o++] = '\'';
    out[o] = '\0';
}

/* A PostgreSQL conninfo value: '...' with ' and \ backslash-escaped. */
static void conninfo_quote(const char *in, char *out, size_t len)
{
    size_t o = 0;
    if (len < 3)
        return;
    out[o++] = '\'';
    for (; *in && o + 4 < len; in++) {
        if (*in == '\'' || *in == '\\')
            out[o++] = '\\';
        out[o++] = *in;
    }
    out[o++] = '\'';
    out[o] = '\0';
}

/* Writes path (owned by the PostgreSQL user, 0600) unless it already holds text. */
static int write_owned_file(const emu_pgembed *pg, const char *path, const char *text, char *err, size_t errlen)
{
    char old[8192];
    FILE *f = fopen(path, "r");
    if (f) {
        size_t n = fread(old, 1, sizeof old - 1, f);
        old[n] = '\0';
        fclose(f);
        if (strcmp(old, text) == 0)
            return 0;
    }
    char tmp[EMU_PGEMBED_PATH_MAX + 16];
    if (path_join(tmp, sizeof tmp, path, ".tmp") < 0)
        return ent_fail(err, errlen, "postgres: %s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return ent_fail(err, errlen, "postgres: cannot write %s: %s", tmp, strerror(errno));
    size_t len = strlen(text);
    int ok = write(fd, text, len) == (ssize_t)len && fsync(fd) == 0;
    if (ok && pg->switch_user)
        ok = fchown(fd, pg->uid, pg->gid) == 0;
    int e = errno;
    close(fd);
    if (!ok || rename(tmp, path) < 0) {
        e = ok ? errno : e;
        unlink(tmp);
        return ent_fail(err, errlen, "postgres: cannot write %s: %s", path, strerror(e));
    }
    return 0;
}

static int write_sbemu_conf(const emu_pgembed *pg, const char *datadir, char *err, size_t errlen)
{
    /* unix_socket_directories is a list: double-quote the element so that commas
     * and spaces in the path survive, then quote the whole as a string. */
    char elem[EMU_PGEMBED_PATH_MAX + 8], quoted[2 * EMU_PGEMBED_PATH_MAX + 16];
    size_t o = 0;
    elem[o++] = '"';
    for (const char *s = pg->sockdir; *s && o + 3 < sizeof elem; s++) {
        if (*s == '"')
            elem[o++] = '"';
        elem[o++] = *s;
    }
    elem[o++] = '"';
    elem[o] = '\0';
    conf_quote(elem, quoted, sizeof quoted);

    char text[sizeof quoted + 1024], path[EMU_PGEMBED_PATH_MAX + 16];
    snprintf(text, sizeof text,
             "# Written by sbemu at each start: edits here are lost. postgresql.conf includes this\n"
             "# file at its end; override with ALTER SYSTEM (postgresql.auto.conf wins).\n"
             "listen_addresses = ''\n"
             "port = %d\n"
             "unix_socket_directories = %s\n"
             "unix_socket_permissions = 0700\n"
             /* a backlog's working set (messages and their indexes) in
              * PostgreSQL's own cache: receiving from a 100k backlog ran 25 %
              * slower than from an empty queue with 128MB, ~10 % with 512MB
              * (allocated as it is used, not at start) */
             "shared_buffers = 512MB\n"
             /* fewer checkpoints under load: each one makes the next write
              * of every page a full-page image in the WAL. pg_wal grows to
              * about this under sustained load; a checkpoint at least every
              * minute then gives back what an idle emulator does not need
              * (the WAL of a 220k backlog stayed 700 MB for 5 minutes) */
             "max_wal_size = 1GB\n"
             "checkpoint_timeout = 1min\n"
             "max_connections = 100\n"
             "fsync = on\n"
             /* a queue's table churns: look often, so completed messages' space
              * is reused and dead index entries leave the claim's path soon */
             "autovacuum_naptime = 5s\n",
             EMU_PGEMBED_PORT, quoted);
    snprintf(path, sizeof path, "%s/sbemu.conf", datadir);
    return write_owned_file(pg, path, text, err, errlen);
}

/* initdb into data.initdb and rename it to data only when complete, so an
 * interrupted first start is simply redone. */
static int create_cluster(emu_pgembed *pg, char *err, size_t errlen)
{
    char tmpdata[EMU_PGEMBED_PATH_MAX + 16], conf[EMU_PGEMBED_PATH_MAX + 32], reason[1200];
    snprintf(tmpdata, sizeof tmpdata, "%s.initdb", pg->pgdata);
    struct stat st;
    if (lstat(tmpdata, &st) == 0) {
        LOG_WARN("postgres: removing %s left by an interrupted first start", tmpdata);
        nftw(tmpdata, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    LOG_INFO("postgres: creating a cluster in %s (first start, as user %s)", pg->pgdata, pg->user);

    char initdb[EMU_PGEMBED_PATH_MAX + 16];
    snprintf(initdb, sizeof initdb, "%s/initdb", pg->bindir);
    char *argv[] = { initdb, "-D", tmpdata, "-U", EMU_PGEMBED_USER, "--auth=trust", "-E", "UTF8", "--no-locale",
                     NULL };
    off_t from = file_size(pg->logfile);
    int rc = run(pg, argv);
    if (rc != 0) {
        log_reason(pg, from, reason, sizeof reason);
        return ent_fail(err, errlen, "postgres: initdb failed (exit %d): %s (see %s)", rc, reason, pg->logfile);
    }

    snprintf(conf, sizeof conf, "%s/postgresql.conf", tmpdata);
    FILE *f = fopen(conf, "a");
    if (!f || fputs("\n# sbemu: the embedded cluster's settings (socket only, no TCP)\n"
                    "include_if_exists = 'sbemu.conf'\n", f) < 0 || fclose(f) != 0)
        return ent_fail(err, errlen, "postgres: cannot append to %s: %s", conf, strerror(errno));
    if (write_sbemu_conf(pg, tmpdata, err, errlen) < 0)
        return -1;
    if (rename(tmpdata, pg->pgdata) < 0)
        return ent_fail(err, errlen, "postgres: rename %s to %s: %s", tmpdata, pg->pgdata, strerror(errno));
    return 0;
}

/* ---- the server ---- */

static pid_t read_postmaster_pid(const emu_pgembed *pg)
{
    char path[EMU_PGEMBED_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/postmaster.pid", pg->pgdata);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long pid = 0;
    if (fscanf(f, "%ld", &pid) != 1)
        pid = 0;
    fclose(f);
    return pid > 0 ? (pid_t)pid : 0;
}

/* Alive and not a zombie (an unreaped dead postmaster is as good as gone). */
static int process_alive(pid_t pid)
{
    if (kill(pid, 0) < 0 && errno == ESRCH)
        return 0;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

static void process_name(pid_t pid, char *out, size_t len)
{
    char path[64];
    snprintf(out, len, "?");
    snprintf(path, sizeof path, "/proc/%ld/comm", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(out, (int)len, f))
        out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

static void build_conninfo(const emu_pgembed *pg, const char *db, char *out, size_t len)
{
    char host[2 * EMU_PGEMBED_PATH_MAX + 4];
    conninfo_quote(pg->sockdir, host, sizeof host);
    snprintf(out, len, "host=%s port=%d user=%s dbname=%s", host, EMU_PGEMBED_PORT, EMU_PGEMBED_USER, db);
}

static bool answers(const emu_pgembed *pg)
{
    char ci[2 * EMU_PGEMBED_PATH_MAX + 128];
    build_conninfo(pg, "postgres", ci, sizeof ci);
    strcat(ci, " connect_timeout=2");
    return store_server_answers(ci);
}

/* A postmaster from an earlier sbemu (killed before it could stop it) that
 * still runs: reuse it once it answers. Returns 1 adopted, 0 nothing to adopt
 * (no pid file, or its process is gone), -1 error. */
static int adopt_running(emu_pgembed *pg, char *err, size_t errlen)
{
    pid_t pid = read_postmaster_pid(pg);
    if (!pid || !process_alive(pid))
        return 0;
    char name[64];
    process_name(pid, name, sizeof name);
    if (strcmp(name, "postgres") != 0 && strcmp(name, "postmaster") != 0)
        return ent_fail(err, errlen,
                    "postgres: %s/postmaster.pid names pid %ld, which is now '%s', not PostgreSQL; if no "
                    "PostgreSQL runs on this cluster, remove that file and start again",
                    pg->pgdata, (long)pid, name);
    long deadline = now_ms() + ADOPT_WAIT_MS;
    for (;;) {
        if (answers(pg)) {
            pg->postmaster_pid = pid;
            pg->adopted = 1;
            LOG_INFO("postgres: reusing the server (pid %ld) left running by an earlier sbemu", (long)pid);
            return 1;
        }
        if (!process_alive(pid))
            return 0; /* it was shutting down; start a new one */
        if (now_ms() > deadline)
            return ent_fail(err, errlen,
                        "postgres: PostgreSQL pid %ld runs on %s but does not answer on %s; stop it "
                        "(pg_ctl -D %s stop) and start again",
                        (long)pid, pg->pgdata, pg->sockdir, pg->pgdata);
        sleep_ms(100);
    }
}

static int pg_ctl_start(emu_pgembed *pg, char *err, size_t errlen)
{
    char pg_ctl[EMU_PGEMBED_PATH_MAX + 16], reason[1200];
    snprintf(pg_ctl, sizeof pg_ctl, "%s/pg_ctl", pg->bindir);
    char *argv[] = { pg_ctl, "-D", pg->pgdata, "-l", pg->logfile, "-w", "-t", START_TIMEOUT_S, "-s", "start", NULL };

    long deadline = now_ms() + START_RETRY_WINDOW_MS;
    int waited = 0;
    for (;;) {
        off_t from = file_size(pg->logfile);
        int rc = run(pg, argv);
        if (rc == 0) {
            pg->postmaster_pid = read_postmaster_pid(pg);
            return 0;
        }
        log_reason(pg, from, reason, sizeof reason);
        /* Anything but a dead (zombie) postmaster or lingering backends will
         * not get better by waiting. */
        pid_t other = read_postmaster_pid(pg);
        int transient = strstr(reason, "still in use") || (other && !process_alive(other));
        if (now_ms() > deadline || !transient)
            return ent_fail(err, errlen, "postgres: pg_ctl start failed (exit %d): %s (see %s)", rc, reason,
                        pg->logfile);
        if (!waited++)
            LOG_INFO("postgres: waiting for the processes of a killed server to go away (%s)", reason);
        sleep_ms(START_RETRY_MS);
    }
}

static int ensure_database(const emu_pgembed *pg, char *err, size_t errlen)
{
    char ci[2 * EMU_PGEMBED_PATH_MAX + 128], why[1024];
    build_conninfo(pg, "postgres", ci, sizeof ci);
    int rc = store_ensure_database(ci, EMU_PGEMBED_DB, why, sizeof why);
    if (rc == STORE_SETUP_NO_CONNECTION)
        return ent_fail(err, errlen, "postgres: cannot connect over %s: %s", pg->sockdir, why);
    return rc ? ent_fail(err, errlen, "postgres: %s", why) : 0;
}

static int pg_ctl_stop(const emu_pgembed *pg)
{
    char pg_ctl[EMU_PGEMBED_PATH_MAX + 16];
    snprintf(pg_ctl, sizeof pg_ctl, "%s/pg_ctl", pg->bindir);
    char *argv[] = { (char *)pg_ctl, "-D", (char *)pg->pgdata, "-m", "fast", "-w", "-t", STOP_TIMEOUT_S, "-s",
                     "stop", NULL };
    return run(pg, argv);
}

static int read_major(const emu_pgembed *pg)
{
    char path[EMU_PGEMBED_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/PG_VERSION", pg->pgdata);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int v = 0;
    if (fscanf(f, "%d", &v) != 1)
        v = 0;
    fclose(f);
    return v;
}

/* Where a cluster goes when PostgreSQL's user cannot reach the data dir (a
 * checkout under /root is the usual case): a directory of its own here, named
 * by a hash of the data dir, with <data-dir>/pg a symlink to it. */
#define EMU_PGEMBED_RELOCATE_BASE "/var/lib/sbemu"

static int set_pgdir(emu_pgembed *pg, const char *dir)
{
    return path_join(pg->pgdir, sizeof pg->pgdir, dir, "") < 0 ||
                   path_join(pg->pgdata, sizeof pg->pgdata, pg->pgdir, "/data") < 0 ||
                   path_join(pg->logfile, sizeof pg->logfile, pg->pgdir, "/postgres.log") < 0
               ? -1
               : 0;
}

static int relocate(emu_pgembed *pg, char *err, size_t errlen)
{
    char link[EMU_PGEMBED_PATH_MAX], target[EMU_PGEMBED_PATH_MAX];
    snprintf(link, sizeof link, "%s", pg->pgdir);
    snprintf(target, sizeof target, "%s/%016llx", EMU_PGEMBED_RELOCATE_BASE, (unsigned long long)fnv1a64(link));
    if (emu_mkdir_p(EMU_PGEMBED_RELOCATE_BASE, 0755) < 0 || (mkdir(target, 0700) < 0 && errno != EEXIST))
        return ent_fail(err, errlen, "postgres: cannot create %s: %s", target, strerror(errno));
    if (chown(target, pg->uid, pg->gid) < 0)
        return ent_fail(err, errlen, "postgres: chown %s to %s: %s", target, pg->user, strerror(errno));
    rmdir(link); /* the empty directory made a moment ago; a non-empty one stays and symlink fails */
    if (symlink(target, link) < 0)
        return ent_fail(err, errlen, "postgres: cannot link %s to %s: %s", link, target, strerror(errno));
    LOG_INFO("postgres: %s cannot reach %s, so the cluster lives in %s (linked from there)", pg->user, link, target);
    return set_pgdir(pg, target);
}

static int setup_paths(emu_pgembed *pg, const char *data_dir, char *err, size_t errlen)
{
    char abs[EMU_PGEMBED_PATH_MAX];
    if (!data_dir || !*data_dir)
        return ent_fail(err, errlen, "postgres: no data directory");
    if (emu_mkdir_p(data_dir, 0755) < 0)
        return ent_fail(err, errlen, "postgres: cannot create %s: %s", data_dir, strerror(errno));
    if (!realpath(data_dir, abs))
        return ent_fail(err, errlen, "postgres: %s: %s", data_dir, strerror(errno));
    if (path_join(pg->pgdir, sizeof pg->pgdir, abs, "/pg") < 0 ||
        path_join(pg->pgdata, sizeof pg->pgdata, pg->pgdir, "/data") < 0 ||
        path_join(pg->logfile, sizeof pg->logfile, pg->pgdir, "/postgres.log") < 0)
        return ent_fail(err, errlen, "postgres: %s: path too long", abs);
    return 0;
}

int emu_pgembed_start(emu_pgembed *pg, const char *data_dir, char *conninfo, size_t conninfo_len, char *err,
                      size_t errlen)
{
    long t0 = now_ms();
    struct stat st;

    memset(pg, 0, sizeof *pg);
    pg->lock_fd = -1;
    if (err && errlen)
        err[0] = '\0';

    if (setup_paths(pg, data_dir, err, errlen) < 0 || choose_user(pg, err, errlen) < 0)
        return -1;
    if (mkdir(pg->pgdir, 0700) < 0 && errno != EEXIST)
        return ent_fail(err, errlen, "postgres: cannot create %s: %s", pg->pgdir, strerror(errno));
    if (pg->switch_user && stat(pg->pgdir, &st) == 0 && st.st_uid != pg->uid &&
        chown(pg->pgdir, pg->uid, pg->gid) < 0)
        return ent_fail(err, errlen, "postgres: chown %s to %s: %s", pg->pgdir, pg->user, strerror(errno));
    char real[EMU_PGEMBED_PATH_MAX];
    if (realpath(pg->pgdir, real) && strcmp(real, pg->pgdir) && set_pgdir(pg, real) < 0)
        return ent_fail(err, errlen, "postgres: %s: path too long", real); /* an earlier relocation */
    if (pg->switch_user && check_reachable(pg, err, errlen) < 0) {
        char first[512];
        snprintf(first, sizeof first, "%s", err);
        if (relocate(pg, err, errlen) < 0 || check_reachable(pg, err, errlen) < 0) {
            LOG_ERROR("%s", first);
            return -1;
        }
    }
    if (take_lock(pg, err, errlen) < 0)
        return -1;

    int existed = stat(pg->pgdata, &st) == 0;
    if (find_bindir(pg, existed ? read_major(pg) : 0, err, errlen) < 0 || setup_sockdir(pg, err, errlen) < 0)
        goto fail_locked;
    if (!existed && create_cluster(pg, err, errlen) < 0)
        goto fail_locked;
    if (write_sbemu_conf(pg, pg->pgdata, err, errlen) < 0)
        goto fail_locked;

    int adopted = adopt_running(pg, err, errlen);
    if (adopted < 0)
        goto fail_locked;
    if (!adopted) {
        LOG_INFO("postgres: starting the server on %s (as user %s)", pg->pgdata, pg->user);
        if (pg_ctl_start(pg, err, errlen) < 0)
            goto fail_locked;
    }
    pg->active = 1;
    if (ensure_database(pg, err, errlen) < 0) {
        emu_pgembed_stop(pg);
        return -1;
    }
    build_conninfo(pg, EMU_PGEMBED_DB, conninfo, conninfo_len);
    LOG_INFO("postgres: ready in %ld ms (pid %ld, socket in %s)", now_ms() - t0, (long)pg->postmaster_pid,
             pg->sockdir);
    return 0;

fail_locked:
    release_lock(pg);
    return -1;
}

int emu_pgembed_revive(emu_pgembed *pg, char *err, size_t errlen)
{
    pid_t pid = read_postmaster_pid(pg);
    if (pid && process_alive(pid))
        return 0; /* it runs (perhaps recovering after a backend crashed): connecting will tell */
    /* sbemu.conf is as start wrote it: rewriting it on a full disk could only lose it */
    return pg_ctl_start(pg, err, errlen);
}

void emu_pgembed_stop(emu_pgembed *pg)
{
    if (!pg || !pg->active)
        return;
    LOG_INFO("postgres: stopping the server (pid %ld)", (long)pg->postmaster_pid);
    int rc = pg_ctl_stop(pg);
    if (rc != 0)
        LOG_WARN("postgres: pg_ctl stop failed (exit %d); see %s", rc, pg->logfile);
    release_lock(pg);
    pg->active = 0;
}
