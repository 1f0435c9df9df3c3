/* Activity: what keeps an entity from AutoDeleteOnIdle and moves its
 * AccessedAt (entity_runtime.accessed_at). Sends, completes and management
 * operations stamp it in the statements that already lock the entity's
 * runtime row; a receive stamps it with a statement of its own (STMT_TOUCH),
 * an update of that one row. Stamped per receive, the row was hot: one update
 * per session of 1,000 sessions of 20, one per message for sessions of one
 * message. So an emulator stamps an entity's receives at most once per
 * ENT_ACTIVITY_STAMP_MS: the shortest idle time is a minute (a namespace's,
 * ENT_NAMESPACE_IDLE_MIN_MS; an entity's is at least 5), so an AccessedAt up
 * to a second old deletes nothing early. Pure C, no I/O: the caller keeps the
 * last stamp (amqp10/amqp_hint.h). */
#ifndef ENT_ACTIVITY_H
#define ENT_ACTIVITY_H

#include <stdbool.h>
#include <stdint.h>

/* The longest a receive's activity goes unstamped by the emulator that saw it. */
#define ENT_ACTIVITY_STAMP_MS 1000

/* Whether a receive at now_ms is stamped, the entity's last stamp having
 * been at last_ms (0: none yet). A clock set back (ent_clock.h) stamps again. */
bool ent_activity_stamp_due(int64_t last_ms, int64_t now_ms);

#endif
