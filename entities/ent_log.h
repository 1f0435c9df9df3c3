/* Logging for every room. entities/ does no I/O itself: the emulator installs a
 * sink (emulator/emu_log.c writes to stderr); until then messages are dropped.
 * Levels follow --log-level: error, warn, info, debug. */
#ifndef ENT_LOG_H
#define ENT_LOG_H

typedef enum ent_log_level { ENT_LOG_ERROR, ENT_LOG_WARN, ENT_LOG_INFO, ENT_LOG_DEBUG } ent_log_level;

typedef void (*ent_log_sink)(ent_log_level level, const char *line);

void ent_log_set_sink(ent_log_sink sink);
void ent_log_set_level(ent_log_level level);
int ent_log_enabled(ent_log_level level);
void ent_log(ent_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define LOG_ERROR(...) ent_log(ENT_LOG_ERROR, __VA_ARGS__)
#define LOG_WARN(...) ent_log(ENT_LOG_WARN, __VA_ARGS__)
#define LOG_INFO(...) ent_log(ENT_LOG_INFO, __VA_ARGS__)
#define LOG_DEBUG(...) do { if (ent_log_enabled(ENT_LOG_DEBUG)) ent_log(ENT_LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
