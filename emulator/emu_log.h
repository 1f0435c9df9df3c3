/* The emulator's log sink: timestamped lines on stderr, one per message.
 *
 *   2026-11-22T03:40:01.123Z INFO listening on 0.0.0.0:5672
 *
 * Every room logs through entities/ent_log.h; this file only decides where the
 * lines go. Until emu_log_init() runs, messages are dropped. */
#ifndef EMU_LOG_H
#define EMU_LOG_H

#include "ent_log.h"

/* Installs the stderr sink and sets the threshold. Safe to call again to change
 * the level. */
void emu_log_init(ent_log_level level);

/* "error", "warn", "info", "debug" (case-insensitive; "warning" is accepted
 * too). Returns 0 and sets *out, or -1 when s names no level. */
int emu_log_parse_level(const char *s, ent_log_level *out);

/* The lower-case name of a level, as --log-level spells it. */
const char *emu_log_level_name(ent_log_level level);

#endif
