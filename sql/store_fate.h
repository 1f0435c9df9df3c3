/* A message's fate (entities/ent_send.h) in the store's terms: the state and
 * subqueue columns of a store_new_message. Used by every path that stores a
 * sent message (a link's transfer, $management schedule-message). */
#ifndef STORE_FATE_H
#define STORE_FATE_H

#include "ent_send.h"
#include "store_queue.h"

/* Sets m's timing (available, TTL, expiry) and where it rests. */
void store_fate_apply(store_new_message *m, const ent_send_fate *f);
/* Changes m's resting place after forwarding failed (ent_send_forward_failed). */
void store_fate_forward_failed(store_new_message *m);
/* Whether m rests as scheduled (its state is the store's scheduled one). */
bool store_fate_is_scheduled(const store_new_message *m);

#endif
