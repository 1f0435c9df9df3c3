/* Session rules (ent_session.h). The error texts are Service Bus's own where
 * the SDKs surface them to users. */
#include "ent_session.h"

#include <stdio.h>

sb_status ent_session_receiver_check(const ent_entity *e, bool dead_letter, bool has_filter, char *err,
                                     size_t errlen)
{
    if (dead_letter && has_filter) {
        snprintf(err, errlen,
                 "The dead-letter queue of '%s' has no sessions: receive from it without a session.", e->name);
        return SB_ERR_NOT_ALLOWED;
    }
    if (dead_letter)
        return SB_OK;
    if (e->requires_session && !has_filter) {
        snprintf(err, errlen,
                 "It is not possible for an entity that requires sessions to create a non-sessionful message "
                 "receiver. Entity: '%s'.",
                 e->name);
        return SB_ERR_NOT_ALLOWED;
    }
    if (!e->requires_session && has_filter) {
        snprintf(err, errlen,
                 "It is not possible for an entity that does not require sessions to create a sessionful message "
                 "receiver (RequiresSession is false). Entity: '%s'.",
                 e->name);
        return SB_ERR_NOT_ALLOWED;
    }
    return SB_OK;
}

sb_status ent_session_send_check(bool requires_session, const char *entity_name, bool has_session_id, char *err,
                                 size_t errlen)
{
    if (requires_session && !has_session_id) {
        snprintf(err, errlen,
                 "The SessionId was not set on a message, and it cannot be sent to the entity. Entities that have "
                 "session support enabled can only receive messages that have the SessionId set to a valid value. "
                 "Entity: '%s'.",
                 entity_name);
        return SB_ERR_NOT_ALLOWED;
    }
    return SB_OK;
}

bool ent_session_holds(const ent_entity *subscription, bool has_session_id)
{
    return has_session_id || !subscription->requires_session;
}

bool ent_session_lock_live(bool held, int64_t until_ms, int64_t now_ms) { return held && now_ms < until_ms; }

sb_status ent_session_settle_failure(sb_status st, bool in_session, bool lock_live)
{
    return st == SB_ERR_LOCK_LOST && in_session && !lock_live ? SB_ERR_SESSION_LOCK_LOST : st;
}

int64_t ent_session_accept_timeout_ms(int64_t requested_ms)
{
    return requested_ms > 0 ? requested_ms : ENT_SESSION_ACCEPT_TIMEOUT_DEFAULT_MS;
}

sb_status ent_session_requires_session_fixed(const char *kind, const char *path, bool current, char *err,
                                             size_t errlen)
{
    snprintf(err, errlen,
             "%s \"%s\": RequiresSession cannot be changed on an existing %s (it is %s); delete the %s and create it "
             "again to change it.",
             kind, path, kind, current ? "true" : "false", kind);
    return SB_ERR_ARGUMENT;
}

ent_session_lock_verdict ent_session_lock_outcome(sb_status st, const char *named_sid, bool with_claim, size_t claimed,
                                                  sb_status *refusal, char *err, size_t errlen)
{
    if (st == SB_OK)
        return !named_sid && with_claim && !claimed ? ENT_SESSION_LOCK_EMPTY : ENT_SESSION_LOCK_GIVEN;
    if (st == SB_ERR_SESSION_CANNOT_BE_LOCKED && !named_sid)
        return ENT_SESSION_LOCK_WAIT;
    *refusal = st;
    if (st == SB_ERR_SESSION_CANNOT_BE_LOCKED)
        snprintf(err, errlen, "The requested session '%s' cannot be accepted. It may be locked by another receiver.",
                 named_sid);
    else
        snprintf(err, errlen, "The emulator's store could not lock the session; retry.");
    return ENT_SESSION_LOCK_REFUSED;
}
