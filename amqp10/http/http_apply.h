/* A PUT body (http_xml_parse_entry's properties) turned into what the store
 * keeps: entity properties through the ent_*_set setters of entities/ (the
 * same rules and texts as Config.json), a rule through broker_rule_def (the
 * same checks as $management's add-rule). Pure: cmocka drives it.
 *
 * Every property of the body must be one the description has. Some are taken
 * but not kept, because the emulator has no use for them or they are the
 * read-only figures the SDKs send back on update (CreatedAt, CountDetails,
 * ...); those that would change behaviour the emulator does not have
 * (EnableExpress, IsAnonymousAccessible, authorization rules, another
 * MaxMessageSizeInKilobytes than its own) are refused, naming the property,
 * rather than dropped. */
#ifndef HTTP_APPLY_H
#define HTTP_APPLY_H

#include <stddef.h>
#include <stdint.h>

#include "ent_props.h"
#include "ent_status.h"
#include "http_xml.h"
#include "broker_rule.h"

/* The description each resource takes. */
#define HTTP_APPLY_QUEUE "QueueDescription"
#define HTTP_APPLY_TOPIC "TopicDescription"
#define HTTP_APPLY_SUBSCRIPTION "SubscriptionDescription"
#define HTTP_APPLY_RULE "RuleDescription"
/* The element of a SubscriptionDescription that holds the rule it starts with. */
#define HTTP_APPLY_DEFAULT_RULE "DefaultRuleDescription"

/* The props (initialised with their name and defaults) take the body's
 * values. max_message_kb: the emulator's message size limit in KB, the only
 * MaxMessageSizeInKilobytes it takes. SB_OK, or a status and err. */
sb_status http_apply_queue(ent_queue_props *q, const http_xml_entry *e, int64_t max_message_kb, char *err,
                           size_t errlen);
sb_status http_apply_topic(ent_topic_props *t, const http_xml_entry *e, int64_t max_message_kb, char *err,
                           size_t errlen);
/* *has_rule tells whether the body holds a DefaultRuleDescription (read it with
 * http_apply_rule(.., HTTP_APPLY_DEFAULT_RULE, ..)). */
sb_status http_apply_subscription(ent_subscription_props *s, const http_xml_entry *e, bool *has_rule, char *err,
                                  size_t errlen);

/* Fills d (free it with broker_rule_def_free in every case) from the rule
 * description at prefix ("" for a RuleDescription body); name is the rule's
 * name from the URL, or NULL to take the body's <Name> ($Default if none). */
sb_status http_apply_rule(broker_rule_def *d, const http_xml_entry *e, const char *prefix, const char *name, char *err,
                          size_t errlen);

/* A ForwardTo value as the SDKs send it (sb://host/target, or a bare name)
 * reduced to the entity path the store keeps. 0, or -1 when it is not one. */
int http_apply_forward_path(const char *value, char *out, size_t outlen);

#endif
