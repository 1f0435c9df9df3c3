/* See emu_default_config.h. The default entities are those of the official
 * image's Config.json (its queue.1 and topic.1 with four subscriptions: a
 * correlation filter on ContentType, one on an application property, none,
 * and a SQL filter with an action), written here as our own JSON. */
#include "emu_default_config.h"

#include <string.h>

emu_config_source emu_config_choose(const char *given, bool official_exists, const char **path)
{
    *path = NULL;
    if (given && !strcmp(given, EMU_CONFIG_NONE))
        return EMU_CONFIG_FROM_NOTHING;
    if (given) {
        *path = given;
        return EMU_CONFIG_FROM_FILE;
    }
    if (official_exists) {
        *path = EMU_OFFICIAL_CONFIG_PATH;
        return EMU_CONFIG_FROM_FILE;
    }
    return EMU_CONFIG_FROM_DEFAULTS;
}

/* The official defaults' subscription properties, the same for all four. */
#define SUB_PROPS                                                                                                   \
    "\"Properties\": {\"DeadLetteringOnMessageExpiration\": false, \"DefaultMessageTimeToLive\": \"PT1H\","         \
    " \"LockDuration\": \"PT1M\", \"MaxDeliveryCount\": 3, \"ForwardDeadLetteredMessagesTo\": \"\","                 \
    " \"ForwardTo\": \"\", \"RequiresSession\": false}"

static const char default_config[] =
    "{\"UserConfig\": {\"Namespaces\": [{\"Name\": \"sbemulatorns\","
    " \"Queues\": [{\"Name\": \"queue.1\", \"Properties\": {\"DeadLetteringOnMessageExpiration\": false,"
    "  \"DefaultMessageTimeToLive\": \"PT1H\", \"DuplicateDetectionHistoryTimeWindow\": \"PT20S\","
    "  \"ForwardDeadLetteredMessagesTo\": \"\", \"ForwardTo\": \"\", \"LockDuration\": \"PT1M\","
    "  \"MaxDeliveryCount\": 3, \"RequiresDuplicateDetection\": false, \"RequiresSession\": false}}],"
    " \"Topics\": [{\"Name\": \"topic.1\", \"Properties\": {\"DefaultMessageTimeToLive\": \"PT1H\","
    "  \"DuplicateDetectionHistoryTimeWindow\": \"PT20S\", \"RequiresDuplicateDetection\": false},"
    "  \"Subscriptions\": ["
    "   {\"Name\": \"subscription.1\", " SUB_PROPS ", \"Rules\": [{\"Name\": \"app-prop-filter-1\", \"Properties\":"
    "    {\"FilterType\": \"Correlation\", \"CorrelationFilter\": {\"ContentType\": \"application/json\"}}}]},"
    "   {\"Name\": \"subscription.2\", " SUB_PROPS ", \"Rules\": [{\"Name\": \"user-prop-filter-1\", \"Properties\":"
    "    {\"FilterType\": \"Correlation\", \"CorrelationFilter\": {\"Properties\": {\"prop1\": \"value1\"}}}}]},"
    "   {\"Name\": \"subscription.3\", " SUB_PROPS "},"
    "   {\"Name\": \"subscription.4\", " SUB_PROPS ", \"Rules\": [{\"Name\": \"sql-filter-1\", \"Properties\":"
    "    {\"FilterType\": \"Sql\", \"SqlFilter\": {\"SqlExpression\": \"sys.MessageId = '123456' AND userProp1 = 'value1'\"},"
    "     \"Action\": {\"SqlExpression\": \"SET sys.To = 'Entity'\"}}}]}]}]}],"
    " \"Logging\": {\"Type\": \"Console\"}}}";

const char *emu_default_config_json(void) { return default_config; }
