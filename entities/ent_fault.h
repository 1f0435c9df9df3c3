/* Faults on demand: rules that make chosen operations fail, stall or lose
 * their locks, so that a test suite can exercise its retry and recovery code
 * (README "Faults on demand"). This is the decision and nothing else: what a
 * rule is, whether it is valid (with a reason that names the problem), and
 * whether one fires for an operation now. No I/O: the rules live in
 * PostgreSQL (sql/store_faults.c), the broker holds the loaded list
 * (amqp10/broker/broker_fault.c) and the wire carries the effect out
 * (amqp10/amqp_fault.c).
 *
 * A rule names a namespace, an entity (a glob), an operation, an effect and
 * how often: the next N times (a count every replica shares: the store
 * decrements it when the rule fires), with a probability drawn from a seed
 * (the n-th operation a rule matches always draws the same), until a time on
 * the emulator's clock; any combination, and by default every time until the
 * rule is removed. */
#ifndef ENT_FAULT_H
#define ENT_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ent_lengths.h"
#include "ent_props.h"
#include "ent_settle.h"
#include "ent_status.h"

/* A rule's name: it is the last segment of its URL (/$sbemu/faults/<name>). */
#define ENT_FAULT_NAME_MAX 64
#define ENT_FAULT_NAME_SIZE (ENT_FAULT_NAME_MAX + 1)
/* A namespace name (Service Bus allows 6 to 50 characters). */
#define ENT_FAULT_NAMESPACE_MAX 50
#define ENT_FAULT_NAMESPACE_SIZE (ENT_FAULT_NAMESPACE_MAX + 1)
/* An entity glob: room for the longest path a link can name
 * (topic/Subscriptions/sub/$DeadLetterQueue). */
#define ENT_FAULT_ENTITY_MAX (ENT_ENTITY_PATH_MAX + 128)
#define ENT_FAULT_ENTITY_SIZE (ENT_FAULT_ENTITY_MAX + 1)
/* A $management operation's name (com.microsoft:...). */
#define ENT_FAULT_MANAGEMENT_MAX 64
#define ENT_FAULT_MANAGEMENT_SIZE (ENT_FAULT_MANAGEMENT_MAX + 1)
/* The error description a rule gives (what the client sees). */
#define ENT_FAULT_DESCRIPTION_MAX 1024
#define ENT_FAULT_DESCRIPTION_SIZE (ENT_FAULT_DESCRIPTION_MAX + 1)
/* A delay, or how long a delivered message keeps its lock: longer than an
 * hour is no fault a test waits for. */
#define ENT_FAULT_MS_MAX INT64_C(3600000)
/* "The next N times": at most this many. */
#define ENT_FAULT_TIMES_MAX INT64_C(1000000000)
/* Rules in force at once: every operation walks them while there are any. */
#define ENT_FAULT_RULES_MAX 256
/* Room for a refusal's text. */
#define ENT_FAULT_ERR_MAX 1024

/* What an operation is. A $management request is ENT_FAULT_MANAGEMENT with
 * its name; rules for renew-lock match com.microsoft:renew-lock requests. */
typedef enum ent_fault_op {
    ENT_FAULT_CONNECT,     /* the client's open (after SASL); no entity */
    ENT_FAULT_ATTACH,      /* a sender's or receiver's attach to an entity */
    ENT_FAULT_SEND,        /* a transfer (a message or a batch) */
    ENT_FAULT_RECEIVE,     /* a claim that found messages, before they are delivered */
    ENT_FAULT_COMPLETE,    /* a link's disposition, by its outcome */
    ENT_FAULT_ABANDON,
    ENT_FAULT_DEFER,
    ENT_FAULT_DEAD_LETTER,
    ENT_FAULT_RENEW_LOCK,  /* $management com.microsoft:renew-lock */
    ENT_FAULT_MANAGEMENT,  /* any $management request, or one by its name */
    ENT_FAULT_CBS,         /* a $cbs put-token; its entity is the token's audience path */
    ENT_FAULT_OP_COUNT
} ent_fault_op;

typedef enum ent_fault_effect {
    ENT_FAULT_NONE,      /* no rule fired: the operation goes on */
    ENT_FAULT_ERROR,     /* answer with a Service Bus error */
    ENT_FAULT_DELAY,     /* answer delay_ms later */
    ENT_FAULT_NEVER,     /* never answer: the client's own timeout fires */
    ENT_FAULT_DETACH,    /* detach the link with an error */
    ENT_FAULT_CLOSE,     /* close the connection with an error */
    ENT_FAULT_LOSE_LOCK, /* receive: deliver, and end the lock after_ms later */
    ENT_FAULT_EFFECT_COUNT
} ent_fault_effect;

/* One rule. Plain data (fixed buffers): copy it by assignment. */
typedef struct ent_fault_rule {
    char name[ENT_FAULT_NAME_SIZE];
    char namespace_name[ENT_FAULT_NAMESPACE_SIZE]; /* as given; "" when not given (the default) */
    char entity[ENT_FAULT_ENTITY_SIZE];            /* a glob ('*' any run, '?' one character); "*" unless given */
    ent_fault_op op;                               /* ENT_FAULT_OP_COUNT until given */
    char management[ENT_FAULT_MANAGEMENT_SIZE];    /* op MANAGEMENT: one operation, "" for all */
    ent_fault_effect effect;                       /* ENT_FAULT_NONE until given */
    sb_status error;                               /* ERROR, DETACH, CLOSE; SB_OK until given */
    char description[ENT_FAULT_DESCRIPTION_SIZE];  /* "" for the default, which names the rule */
    int64_t delay_ms;                              /* DELAY; -1 until given */
    int64_t after_ms;                              /* LOSE_LOCK; -1 until given */
    int64_t times;                                 /* the next N times; -1: every time */
    double probability;                            /* 1 unless given */
    int64_t seed;                                  /* the draws' seed; 0 unless given */
    int64_t until_ms;                              /* no match from then on (emulator clock); 0: no end */
    /* what the store says of it */
    int64_t remaining;                             /* of times; -1 for every time */
    int64_t fired;                                 /* times it fired, on every replica */
    int64_t generation;                            /* which write made it (a PUT starts the counts again) */
    /* this emulator's own */
    uint64_t draws;                                /* operations it matched: the n of its n-th draw */
} ent_fault_rule;

/* The rules in force, in the order they are tried (by name). Ownership: the
 * holder's (the broker); rules is ent_malloc'd. n == 0 is the one test an
 * operation pays while no rule is set. */
typedef struct ent_fault_list {
    size_t n;
    ent_fault_rule *rules;
} ent_fault_list;

/* One operation, as a wire point asks about it. Strings are borrowed. */
typedef struct ent_fault_point {
    ent_fault_op op;
    const char *entity;     /* the path the client named (with /$DeadLetterQueue); "" when none */
    const char *management; /* op MANAGEMENT: the request's operation */
    /* The namespace the operation is in (ent_namespace.h): its name (NULL or
     * "": the default namespace), the default namespace's own name (what a
     * rule may call it; NULL: sbemulatorns), and its id (whose clock a rule's
     * "until" is read on; 0: the default's). A rule matches operations of its
     * own namespace only. */
    const char *namespace_name;
    const char *own_namespace;
    int32_t ns;
} ent_fault_point;

/* ---- names ---- */
const char *ent_fault_op_name(ent_fault_op op);               /* "send", ... */
const char *ent_fault_effect_name(ent_fault_effect effect);   /* "error", ... */
/* A rule's operation as written: its $management name, or the op's name. */
const char *ent_fault_operation_text(const ent_fault_rule *r);
/* The operation a link's settlement is: released counts as an abandon (it
 * gives the message back). */
ent_fault_op ent_fault_op_of_settle(ent_settle_kind kind);
/* Whether name is a $management operation this emulator serves. */
bool ent_fault_management_known(const char *name);

/* ---- building and checking a rule ---- */

/* A rule named name with nothing else given. */
void ent_fault_rule_init(ent_fault_rule *r, const char *name);
/* Sets one key of the JSON shape (README "Faults on demand"), in any letter
 * case: name, namespace, entity, operation, effect, error, description,
 * delayMs, afterMs, times, probability, seed, until. A null value leaves the
 * key as not given. SB_ERR_NOT_FOUND for an unknown key, SB_ERR_ARGUMENT for
 * a value that cannot be one (both with the reason in err). */
sb_status ent_fault_set(ent_fault_rule *r, const char *key, ent_value v, char *err, size_t errlen);
/* Checks the rule as a whole: its name, the namespace (the default's names,
 * namespace_name being Config.json's, or a name any namespace may have,
 * ent_namespace_name_check: the rule waits for a namespace made later; NULL
 * skips the check),
 * the entity glob, which effects apply to the operation, and that
 * each effect has what it needs and nothing it does not use. SB_OK or
 * SB_ERR_ARGUMENT with the reason. */
sb_status ent_fault_validate(const ent_fault_rule *r, const char *namespace_name, char *err, size_t errlen);
/* SB_OK when name can name a rule (1 to ENT_FAULT_NAME_MAX of A-Z a-z 0-9 . _ -). */
sb_status ent_fault_name_check(const char *name, char *err, size_t errlen);
/* SB_OK when glob is an entity glob: a path's characters, '*' and '?', no
 * empty segment. */
sb_status ent_fault_glob_check(const char *glob, char *err, size_t errlen);

/* ---- the decision ---- */

/* Whether text matches glob, ignoring case as entity names do. */
bool ent_fault_glob_match(const char *glob, const char *text);
/* The n-th draw (from 0) of a rule with this seed: true with probability p,
 * the same answer every time for the same (seed, n). */
bool ent_fault_draw(int64_t seed, uint64_t n, double probability);
/* Whether r applies to p at now_ms (operation, entity, until, not used up),
 * before its probability. */
bool ent_fault_matches(const ent_fault_rule *r, const ent_fault_point *p, int64_t now_ms);
/* Whether any rule of list matches p at now_ms, drawing nothing: a point
 * that must copy what it holds before asking asks this first. */
bool ent_fault_any_matches(const ent_fault_list *list, const ent_fault_point *p, int64_t now_ms);
/* The first rule of list, in its order, that fires for p at now_ms: it
 * matches and its draw says yes. Each rule that matched draws once (its
 * draws counter moves), so the pattern of a seeded rule repeats. NULL when
 * none fires. */
ent_fault_rule *ent_fault_decide(ent_fault_list *list, const ent_fault_point *p, int64_t now_ms);
/* The description an error effect carries: the rule's own, or one that names
 * the rule, so a client's error says where it came from. */
void ent_fault_describe(const ent_fault_rule *r, char *out, size_t outlen);

#endif
