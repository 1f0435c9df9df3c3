/* The system properties a filter can name as sys.<Name>: one table for
 * names, types and whether a rule action may change them. The names are
 * those of BrokeredMessage/ServiceBusMessage (service-bus-features.md §4.2). */
#include "filter_internal.h"

typedef struct sys_row {
    const char *name;
    ent_fv_type type;
    int settable; /* 0: the broker owns it, an action may not touch it */
} sys_row;

static const sys_row sys_table[ENT_SYS_COUNT] = {
    [ENT_SYS_MESSAGE_ID] = {"MessageId", ENT_FV_STRING, 1},
    [ENT_SYS_CORRELATION_ID] = {"CorrelationId", ENT_FV_STRING, 1},
    [ENT_SYS_LABEL] = {"Label", ENT_FV_STRING, 1},
    [ENT_SYS_TO] = {"To", ENT_FV_STRING, 1},
    [ENT_SYS_REPLY_TO] = {"ReplyTo", ENT_FV_STRING, 1},
    [ENT_SYS_REPLY_TO_SESSION_ID] = {"ReplyToSessionId", ENT_FV_STRING, 1},
    [ENT_SYS_SESSION_ID] = {"SessionId", ENT_FV_STRING, 1},
    [ENT_SYS_CONTENT_TYPE] = {"ContentType", ENT_FV_STRING, 1},
    [ENT_SYS_PARTITION_KEY] = {"PartitionKey", ENT_FV_STRING, 1},
    [ENT_SYS_VIA_PARTITION_KEY] = {"ViaPartitionKey", ENT_FV_STRING, 1},
    [ENT_SYS_SCHEDULED_ENQUEUE_TIME_UTC] = {"ScheduledEnqueueTimeUtc", ENT_FV_TIME, 1},
    [ENT_SYS_TIME_TO_LIVE] = {"TimeToLive", ENT_FV_DURATION, 1},
    [ENT_SYS_SEQUENCE_NUMBER] = {"SequenceNumber", ENT_FV_INT, 0},
    [ENT_SYS_ENQUEUED_SEQUENCE_NUMBER] = {"EnqueuedSequenceNumber", ENT_FV_INT, 0},
    [ENT_SYS_ENQUEUED_TIME_UTC] = {"EnqueuedTimeUtc", ENT_FV_TIME, 0},
    [ENT_SYS_EXPIRES_AT_UTC] = {"ExpiresAtUtc", ENT_FV_TIME, 0},
    [ENT_SYS_LOCKED_UNTIL_UTC] = {"LockedUntilUtc", ENT_FV_TIME, 0},
    [ENT_SYS_DELIVERY_COUNT] = {"DeliveryCount", ENT_FV_INT, 0},
    [ENT_SYS_LOCK_TOKEN] = {"LockToken", ENT_FV_UUID, 0},
    [ENT_SYS_DEAD_LETTER_SOURCE] = {"DeadLetterSource", ENT_FV_STRING, 0},
    [ENT_SYS_SIZE] = {"Size", ENT_FV_INT, 0},
};

/* Other spellings of the same property: the newer SDKs say Subject. */
static const struct {
    const char *name;
    ent_filter_sys id;
} sys_aliases[] = {
    {"Subject", ENT_SYS_LABEL},
};

const char *ent_filter_sys_name(ent_filter_sys id)
{
    return (unsigned)id < ENT_SYS_COUNT ? sys_table[id].name : NULL;
}

int ent_filter_sys_lookup(const char *name, size_t len)
{
    for (int i = 0; i < ENT_SYS_COUNT; i++)
        if (fascii_ieq(name, len, sys_table[i].name))
            return i;
    for (size_t i = 0; i < sizeof sys_aliases / sizeof sys_aliases[0]; i++)
        if (fascii_ieq(name, len, sys_aliases[i].name))
            return (int)sys_aliases[i].id;
    return -1;
}

ent_fv_type ent_filter_sys_type(ent_filter_sys id)
{
    return (unsigned)id < ENT_SYS_COUNT ? sys_table[id].type : ENT_FV_NULL;
}

int ent_filter_sys_settable(ent_filter_sys id)
{
    return (unsigned)id < ENT_SYS_COUNT && sys_table[id].settable;
}
