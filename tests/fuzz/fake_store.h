/* A store without PostgreSQL, for the connection fuzz targets: every typed
 * store operation amqp10/ calls (store_queue.h, store_topic.h, store_session.h,
 * store_txn.h, store_mgmt.h, store_rules.h) is implemented in fake_store.c and
 * linked instead of sql/'s, so the handlers run as they do against a database.
 *
 * Like the real store, no callback runs inside the call that submits it: each
 * operation waits for the harness's next fake_store_turn. Its outcome (SB_OK
 * or an error) and how many results it returns come from a PRNG the harness
 * seeds from its input, so the fuzzer chooses them. Results are small and
 * plausible: claims and peeks return the last message a client sent (or a
 * canned one), session locks a session, rule lists up to three rules.
 *
 * Ownership: the harness owns the store (fake_store_new / fake_store_free). */
#ifndef FAKE_STORE_H
#define FAKE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Entity ids of what store_load_entities returns (the names are in fake_store.c). */
enum {
    FAKE_QUEUE_ID = 1,         /* "q" */
    FAKE_SESSION_QUEUE_ID = 2, /* "sq", RequiresSession */
    FAKE_TOPIC_ID = 3,         /* "t" */
    FAKE_SUBSCRIPTION_ID = 4,  /* "t/Subscriptions/s", with a SQL rule and a correlation rule */
    FAKE_FORWARD_QUEUE_ID = 5, /* "fq", ForwardTo "q" */
    FAKE_DISABLED_QUEUE_ID = 6 /* "dq", Disabled */
};

store *fake_store_new(void);
/* Fails what is still pending with SB_ERR_INTERNAL (as store_close does), then frees. */
void fake_store_free(store *s);
/* For the next operations: outcomes drawn from seed; an operation fails with
 * a probability of 1 / 2^error_shift (0: never fails). */
void fake_store_reset(store *s, uint32_t seed, unsigned error_shift);
/* Completes every operation submitted before this call, oldest first (those
 * their callbacks submit wait for the next turn). Returns how many ran. */
size_t fake_store_turn(store *s);
size_t fake_store_pending(const store *s);

#endif
