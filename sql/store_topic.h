/* Publishing to a topic: every copy of every message of one delivery, as
 * rows of one merged statement per topic per commit (STMT_PUBLISH_SET). Which
 * copies exist is decided in C (entities/ent_topic.h, amqp10/broker/broker_route.c);
 * the store only guards what must be atomic: the topic's size limit and
 * duplicate window, its sequence numbers, and all copies or none. */
#ifndef STORE_TOPIC_H
#define STORE_TOPIC_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"
#include "store_queue.h"

/* One row: a copy of a message, or a message that no subscription takes.
 * A message's rows are consecutive; its first row has width > 0. */
typedef struct store_copy {
    /* First row of a message: how many of the topic's sequence numbers it
     * takes (the most copies it puts in any one subscription; 1 usually).
     * 0 on the message's other rows. */
    int width;
    /* The copy's sequence number: the message's first plus slot (its index
     * among the message's copies in the same entity), or -1 to take the next
     * sequence number of target itself (a copy forwarded out of the topic). */
    int slot;
    int64_t target;     /* where the copy goes; 0: no copy (the message is still deduplicated) */
    /* m.bytes NULL: the body of the message's first row (copies share it).
     * m.message_id and m.now_ms count on the first row only. */
    store_new_message m;
    size_t size;                 /* bytes the copy holds (its own body, or the message's it shares) */
    bool consume;                /* first row: the message rests in the topic under this lock */
    uint8_t consume_token[16];
    /* For the story (store_story.h), read only while it is recorded: the
     * rule that made the copy (a row of slot STORE_COPY_NOT_ROUTED: the
     * subscription's rules), and for a copy forwarded out of the topic, the
     * subscription it was made for (0: none). The message's first row carries
     * who sent it (m.story_*). */
    const char *story_rule;
    int64_t story_via;
} store_copy;

/* The slot of a row that is no copy: subscription target took none because
 * none of its filters matched. Only the story's rows, and only while it is
 * recorded (the statement then writes them down and stores nothing). */
#define STORE_COPY_NOT_ROUTED (-2)
/* The slot of a copy kept in the topic's log (sql/store_log.h) instead of
 * as a message of its own: it takes the sequence number slot 0 would. A
 * message's logged copies are one log entry, so they agree on everything but
 * their target; the first of them carries what the entry keeps. */
#define STORE_COPY_LOGGED (-3)

/* All rows commit together or not at all. SB_ERR_QUOTA_EXCEEDED when the
 * topic is full (MaxSizeInMegabytes over all its subscriptions),
 * SB_ERR_NOT_FOUND when it was deleted. */
void store_publish(store *s, int64_t topic_id, const store_copy *rows, size_t n, store_status_cb cb, void *ctx);
/* The same rows as a merged op that is not submitted (for store_txn.h; NULL
 * when out of memory or a row could not be encoded). */
store_op *store_publish_rows(int64_t topic_id, const store_copy *rows, size_t n);

#endif
