/* stderr sink for ent_log (see emu_log.h). */
#include "emu_log.h"

#include <stdio.h>
#include <strings.h>
#include <time.h>

static const char *const level_names[] = { "error", "warn", "info", "debug" };
static const char *const level_tags[] = { "ERROR", "WARN", "INFO", "DEBUG" };

const char *emu_log_level_name(ent_log_level level)
{
    if ((unsigned)level < sizeof level_names / sizeof level_names[0])
        return level_names[level];
    return "?";
}

int emu_log_parse_level(const char *s, ent_log_level *out)
{
    if (!s)
        return -1;
    for (unsigned i = 0; i < sizeof level_names / sizeof level_names[0]; i++) {
        if (strcasecmp(s, level_names[i]) == 0) {
            *out = (ent_log_level)i;
            return 0;
        }
    }
    if (strcasecmp(s, "warning") == 0) {
        *out = ENT_LOG_WARN;
        return 0;
    }
    return -1;
}

static void stderr_sink(ent_log_level level, const char *line)
{
    struct timespec ts;
    struct tm tm;
    char stamp[32];

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    const char *tag = (unsigned)level < sizeof level_tags / sizeof level_tags[0] ? level_tags[level] : "?";
    /* One fprintf per line: stderr is unbuffered, so a single call keeps lines
     * from several processes sharing a terminal from interleaving mid-line. */
    fprintf(stderr, "%s.%03ldZ %s %s\n", stamp, ts.tv_nsec / 1000000L, tag, line);
}

void emu_log_init(ent_log_level level)
{
    ent_log_set_level(level);
    ent_log_set_sink(stderr_sink);
}
