/* See ent_message_rules.h. */
#include "ent_message_rules.h"

#include <stdio.h>

#include "ent_lengths.h"
#include "ent_session.h"

int64_t ent_effective_ttl_ms(int64_t message_ttl_ms, int64_t entity_default_ttl_ms)
{
    if (message_ttl_ms < 0)
        return entity_default_ttl_ms < 0 ? ENT_TTL_NONE : entity_default_ttl_ms;
    if (entity_default_ttl_ms >= 0 && message_ttl_ms > entity_default_ttl_ms)
        return entity_default_ttl_ms;
    return message_ttl_ms;
}

int64_t ent_expires_at_ms(int64_t enqueued_ms, int64_t ttl_ms)
{
    if (ttl_ms < 0 || ttl_ms > INT64_MAX - enqueued_ms)
        return 0;
    return enqueued_ms + ttl_ms;
}

int64_t ent_lock_until_ms(int64_t now_ms, int64_t lock_duration_ms) { return now_ms + lock_duration_ms; }

int64_t ent_available_at_ms(int64_t enqueued_ms, int64_t scheduled_ms)
{
    return scheduled_ms > enqueued_ms ? scheduled_ms : enqueued_ms;
}

static sb_status id_check(const char *what, long chars, int limit, char *err, size_t errlen)
{
    if (chars < 0) {
        snprintf(err, errlen, "The %s is not UTF-8 text.", what);
        return SB_ERR_ARGUMENT;
    }
    if (chars > limit) {
        snprintf(err, errlen, "The %s is %ld characters long; the limit is %d.", what, chars, limit);
        return SB_ERR_ARGUMENT;
    }
    return SB_OK;
}

sb_status ent_message_ids_check(long message_id_chars, long session_id_chars, char *err, size_t errlen)
{
    sb_status st = id_check("MessageId", message_id_chars, ENT_MESSAGE_ID_MAX, err, errlen);
    return st != SB_OK ? st : id_check("SessionId", session_id_chars, ENT_SESSION_ID_MAX, err, errlen);
}
