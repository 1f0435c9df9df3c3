/* Formats a log line and hands it to the installed sink (see ent_log.h). */
#include "ent_log.h"

#include <stdarg.h>
#include <stdio.h>

/* Long enough for a SQL error with its statement; longer lines are cut. */
#define ENT_LOG_LINE_MAX 2048

static ent_log_sink log_sink;
static ent_log_level log_level = ENT_LOG_INFO;

void ent_log_set_sink(ent_log_sink sink) { log_sink = sink; }
void ent_log_set_level(ent_log_level level) { log_level = level; }
int ent_log_enabled(ent_log_level level) { return log_sink && level <= log_level; }

void ent_log(ent_log_level level, const char *fmt, ...)
{
    if (!ent_log_enabled(level))
        return;
    char line[ENT_LOG_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    log_sink(level, line);
}
