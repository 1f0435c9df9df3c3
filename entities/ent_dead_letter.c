#include "ent_dead_letter.h"

#include <stdio.h>

#include "ent_props.h"

sb_status ent_dead_letter_text_check(const char *what, const char *text, char *err, size_t errlen)
{
    if (!text)
        return SB_OK;
    long chars = ent_utf8_length(text);
    if (chars < 0) {
        /* also what a too-long text looks like when a copy into an
         * ENT_DEAD_LETTER_TEXT_SIZE buffer cut a code point in two */
        snprintf(err, errlen, "The %s is not UTF-8 text of at most %d characters.", what, ENT_DEAD_LETTER_TEXT_MAX);
        return SB_ERR_ARGUMENT;
    }
    if (chars > ENT_DEAD_LETTER_TEXT_MAX) {
        snprintf(err, errlen, "The %s is %ld characters long; the limit is %d.", what, chars, ENT_DEAD_LETTER_TEXT_MAX);
        return SB_ERR_ARGUMENT_RANGE;
    }
    return SB_OK;
}

ent_dead_letter_reason ent_dead_letter_max_delivery(void)
{
    return (ent_dead_letter_reason){ENT_DLQ_REASON_MAX_DELIVERY, ENT_DLQ_DESC_MAX_DELIVERY};
}

ent_dead_letter_reason ent_dead_letter_expired(void)
{
    return (ent_dead_letter_reason){ENT_DLQ_REASON_TTL, ENT_DLQ_DESC_TTL};
}

ent_dead_letter_reason ent_settle_dead_letter_reason(ent_settle_kind kind, const char *reason,
                                                     const char *description)
{
    if (kind == ENT_SETTLE_ABANDON)
        return ent_dead_letter_max_delivery();
    return (ent_dead_letter_reason){reason, description};
}
