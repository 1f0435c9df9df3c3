/* emu_pgembed against a real PostgreSQL: first start, restart, adopting the
 * server of a SIGKILLed sbemu, recovering after the postmaster itself was
 * SIGKILLed (committed data intact), one owner per data dir, long paths, and
 * a data dir the postgres user cannot reach. Everything runs in a temp dir and
 * every server is stopped at the end, even when a test fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "emu_log.h"
#include "emu_pgembed.h"

static char tmpdir[256];
static emu_pgembed pg_a, pg_b;
static char used_dirs[8][1024]; /* data dirs to clean up, even after a failure */
static int n_used;
static char extra_sockdir[EMU_PGEMBED_PATH_MAX];

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Alive and not a zombie. */
static int alive(pid_t pid)
{
    if (kill(pid, 0) < 0 && errno == ESRCH)
        return 0;
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return !(rp && (rp[2] == 'Z' || rp[2] == 'X'));
}

static int wait_gone(pid_t pid, long ms)
{
    long end = now_ms() + ms;
    while (alive(pid)) {
        if (now_ms() > end)
            return 0;
        usleep(20000);
    }
    return 1;
}

static pid_t postmaster_pid(const char *data_dir)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/pg/data/postmaster.pid", data_dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    long pid = 0;
    if (fscanf(f, "%ld", &pid) != 1)
        pid = 0;
    fclose(f);
    return (pid_t)pid;
}

static const char *data_dir(const char *name)
{
    assert_true(n_used < 8);
    snprintf(used_dirs[n_used], sizeof used_dirs[0], "%s/%s", tmpdir, name);
    return used_dirs[n_used++];
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/sbemu-pgembed-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    /* mkdtemp makes it 0700; the postgres user must be able to pass through. */
    chmod(tmpdir, 0755);
    n_used = 0;
    extra_sockdir[0] = '\0';
    memset(&pg_a, 0, sizeof pg_a);
    memset(&pg_b, 0, sizeof pg_b);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    emu_pgembed_stop(&pg_a);
    emu_pgembed_stop(&pg_b);
    /* A failed test may have left a server running: shut it down hard. */
    for (int i = 0; i < n_used; i++) {
        pid_t pid = postmaster_pid(used_dirs[i]);
        if (pid > 0 && alive(pid)) {
            kill(pid, SIGQUIT);
            if (!wait_gone(pid, 10000))
                kill(pid, SIGKILL);
        }
    }
    if (extra_sockdir[0])
        nftw(extra_sockdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Starts or skips the whole test when this machine cannot run PostgreSQL. */
static void start_ok(emu_pgembed *pg, const char *dir, char *conninfo, size_t len)
{
    char err[1024] = "";
    if (emu_pgembed_start(pg, dir, conninfo, len, err, sizeof err) != 0) {
        if (strstr(err, "no PostgreSQL server found") || strstr(err, "no 'postgres' user")) {
            fprintf(stderr, "skipping: %s\n", err);
            skip();
        }
        fail_msg("emu_pgembed_start: %s", err);
    }
}

/* Runs sql and returns the first value of the first row (or "" for none). */
static const char *query(const char *conninfo, const char *sql)
{
    static char out[256];
    PGconn *c = PQconnectdb(conninfo);
    if (PQstatus(c) != CONNECTION_OK)
        fail_msg("connect %s: %s", conninfo, PQerrorMessage(c));
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
        fail_msg("%s: %s", sql, PQerrorMessage(c));
    snprintf(out, sizeof out, "%s", st == PGRES_TUPLES_OK && PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "");
    PQclear(r);
    PQfinish(c);
    return out;
}

static void test_start_query_stop(void **state)
{
    (void)state;
    char ci[8192];
    const char *dir = data_dir("rel/.sbemu");
    /* A relative --data-dir (the default ./.sbemu) must give an absolute socket path. */
    char cwd[1024];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(tmpdir), 0);
    start_ok(&pg_a, "rel/.sbemu", ci, sizeof ci);
    assert_int_equal(chdir(cwd), 0);

    assert_non_null(strstr(ci, "host='/"));
    assert_non_null(strstr(ci, "dbname=sbemu"));
    assert_string_equal(query(ci, "SELECT 1"), "1");
    assert_string_equal(query(ci, "SELECT current_database()"), "sbemu");
    assert_string_equal(query(ci, "SELECT current_user"), "sbemu");
    assert_string_equal(query(ci, "SHOW listen_addresses"), "");
    assert_string_equal(query(ci, "SHOW fsync"), "on");
    assert_string_equal(query(ci, "SHOW max_connections"), "100");
    assert_string_equal(query(ci, "SHOW shared_buffers"), "512MB");
    assert_string_equal(query(ci, "SHOW max_wal_size"), "1GB");
    assert_string_equal(query(ci, "SHOW checkpoint_timeout"), "1min");
    assert_string_equal(query(ci, "SHOW server_encoding"), "UTF8");

    /* The cluster and the socket directory are private to the server's user. */
    char p[1200];
    struct stat st;
    snprintf(p, sizeof p, "%s/pg", dir);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 077, 0);
    assert_int_equal(stat(pg_a.sockdir, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
    if (geteuid() == 0) {
        struct passwd *pw = getpwnam("postgres");
        assert_non_null(pw);
        assert_int_equal(st.st_uid, pw->pw_uid);
    }

    pid_t pm = pg_a.postmaster_pid;
    assert_true(pm > 0 && alive(pm));
    emu_pgembed_stop(&pg_a);
    assert_true(wait_gone(pm, 5000));
    assert_int_equal(postmaster_pid(dir), 0);
    assert_int_equal(PQping(ci), PQPING_NO_RESPONSE);
    emu_pgembed_stop(&pg_a); /* twice is harmless */
}

static void test_restart_keeps_data_and_is_fast(void **state)
{
    (void)state;
    char ci[8192], ci2[8192];
    const char *dir = data_dir("d");
    start_ok(&pg_a, dir, ci, sizeof ci);
    query(ci, "CREATE TABLE t (v text)");
    query(ci, "INSERT INTO t VALUES ('kept')");
    emu_pgembed_stop(&pg_a);

    long t0 = now_ms();
    start_ok(&pg_a, dir, ci2, sizeof ci2);
    long ms = now_ms() - t0;
    print_message("restart of an existing cluster: %ld ms\n", ms);
    assert_true(ms < 1000);
    assert_string_equal(ci, ci2);
    assert_int_equal(pg_a.adopted, 0);
    assert_string_equal(query(ci2, "SELECT v FROM t"), "kept");
    emu_pgembed_stop(&pg_a);
}

/* In a child: start, write a committed row, die by SIGKILL without stopping. */
static pid_t start_and_die(const char *dir, const char *table)
{
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        emu_pgembed pg;
        char ci[8192], err[1024], sql[256];
        if (emu_pgembed_start(&pg, dir, ci, sizeof ci, err, sizeof err) != 0) {
            fprintf(stderr, "child start: %s\n", err);
            _exit(1);
        }
        PGconn *c = PQconnectdb(ci);
        snprintf(sql, sizeof sql, "CREATE TABLE %s (v text); INSERT INTO %s VALUES ('survived')", table, table);
        PGresult *r = PQexec(c, sql);
        if (PQresultStatus(r) != PGRES_COMMAND_OK)
            _exit(1);
        /* Keep the connection open: dying with a live session is the real case. */
        raise(SIGKILL);
        _exit(1);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
        fail_msg("child did not get as far as SIGKILL (status %d)", status);
    pid_t pm = postmaster_pid(dir);
    assert_true(pm > 0);
    return pm;
}

static void test_adopt_after_sbemu_sigkill(void **state)
{
    (void)state;
    char ci[8192];
    const char *dir = data_dir("killed-sbemu");
    pid_t pm = start_and_die(dir, "t1");
    assert_true(alive(pm));

    long t0 = now_ms();
    start_ok(&pg_a, dir, ci, sizeof ci);
    print_message("adopting a running server: %ld ms\n", now_ms() - t0);
    assert_int_equal(pg_a.adopted, 1);
    assert_int_equal(pg_a.postmaster_pid, pm);
    assert_string_equal(query(ci, "SELECT v FROM t1"), "survived");

    /* Adopted means owned: stop shuts it down. */
    emu_pgembed_stop(&pg_a);
    assert_true(wait_gone(pm, 5000));
    assert_int_equal(postmaster_pid(dir), 0);
}

static void test_recover_after_postmaster_sigkill(void **state)
{
    (void)state;
    char ci[8192];
    const char *dir = data_dir("killed-both");
    pid_t pm = start_and_die(dir, "t2");
    assert_int_equal(kill(pm, SIGKILL), 0);
    /* postmaster.pid stays behind, naming a dead (maybe not yet reaped) pid. */
    assert_int_equal(postmaster_pid(dir), pm);

    long t0 = now_ms();
    start_ok(&pg_a, dir, ci, sizeof ci);
    print_message("start after the postmaster was killed: %ld ms\n", now_ms() - t0);
    assert_int_equal(pg_a.adopted, 0);
    assert_int_not_equal(pg_a.postmaster_pid, pm);
    assert_string_equal(query(ci, "SELECT v FROM t2"), "survived");
    query(ci, "INSERT INTO t2 VALUES ('after')");
    assert_string_equal(query(ci, "SELECT count(*) FROM t2"), "2");
    emu_pgembed_stop(&pg_a);

    /* And once more, cleanly. */
    start_ok(&pg_a, dir, ci, sizeof ci);
    assert_string_equal(query(ci, "SELECT count(*) FROM t2"), "2");
    emu_pgembed_stop(&pg_a);
}

static void test_second_owner_refused(void **state)
{
    (void)state;
    char ci[8192], ci2[8192], err[1024] = "";
    const char *dir = data_dir("shared");
    start_ok(&pg_a, dir, ci, sizeof ci);
    assert_int_equal(emu_pgembed_start(&pg_b, dir, ci2, sizeof ci2, err, sizeof err), -1);
    assert_non_null(strstr(err, "in use by another sbemu"));
    emu_pgembed_stop(&pg_b); /* a failed start leaves nothing to stop */
    assert_string_equal(query(ci, "SELECT 1"), "1");
    emu_pgembed_stop(&pg_a);

    /* Once released, the directory can be taken again. */
    start_ok(&pg_b, dir, ci2, sizeof ci2);
    emu_pgembed_stop(&pg_b);
}

static void test_long_path_uses_short_socket_dir(void **state)
{
    (void)state;
    char ci[8192], name[200];
    memset(name, 'x', 120);
    name[120] = '\0';
    const char *dir = data_dir(name);
    start_ok(&pg_a, dir, ci, sizeof ci);
    snprintf(extra_sockdir, sizeof extra_sockdir, "%s", pg_a.sockdir);
    assert_true(strncmp(pg_a.sockdir, "/tmp/sbemu-", 11) == 0);
    assert_true(strlen(pg_a.sockdir) + strlen("/.s.PGSQL.5432") < 108);
    assert_string_equal(query(ci, "SELECT 1"), "1");
    emu_pgembed_stop(&pg_a);

    /* The same data dir maps to the same socket dir next time. */
    char again[EMU_PGEMBED_PATH_MAX];
    snprintf(again, sizeof again, "%s", extra_sockdir);
    start_ok(&pg_a, dir, ci, sizeof ci);
    assert_string_equal(pg_a.sockdir, again);
    emu_pgembed_stop(&pg_a);
}

/* A data dir that postgres cannot reach (a checkout under /root): the cluster
 * moves to /var/lib/sbemu/<hash>, <data-dir>/pg links to it, and it works. */
static void test_unreachable_data_dir(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        print_message("not root: PostgreSQL runs as this user, nothing to check\n");
        skip();
    }
    char locked[512], dir[600], link[700], target[EMU_PGEMBED_PATH_MAX], ci[8192];
    snprintf(locked, sizeof locked, "%s/locked", tmpdir);
    assert_int_equal(mkdir(locked, 0700), 0);
    snprintf(dir, sizeof dir, "%s/inner/.sbemu", locked);
    start_ok(&pg_a, dir, ci, sizeof ci);
    assert_string_equal(query(ci, "SELECT 1"), "1");
    snprintf(link, sizeof link, "%s/pg", dir);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_non_null(realpath(link, target));
    assert_int_equal(strncmp(target, "/var/lib/sbemu/", 15), 0);
    emu_pgembed_stop(&pg_a);

    /* the next start finds the same cluster through the link */
    start_ok(&pg_a, dir, ci, sizeof ci);
    assert_string_equal(query(ci, "SELECT 1"), "1");
    emu_pgembed_stop(&pg_a);
    char cmd[EMU_PGEMBED_PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", target);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    emu_log_init(ENT_LOG_INFO);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_start_query_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_keeps_data_and_is_fast, setup, teardown),
        cmocka_unit_test_setup_teardown(test_adopt_after_sbemu_sigkill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_after_postmaster_sigkill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_owner_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_path_uses_short_socket_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unreachable_data_dir, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
