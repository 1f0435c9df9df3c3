package sbemu.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusRuleManagerClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.models.CorrelationRuleFilter;
import com.azure.messaging.servicebus.administration.models.CreateRuleOptions;
import com.azure.messaging.servicebus.administration.models.FalseRuleFilter;
import com.azure.messaging.servicebus.administration.models.RuleProperties;
import com.azure.messaging.servicebus.administration.models.SqlRuleAction;
import com.azure.messaging.servicebus.administration.models.SqlRuleFilter;
import com.azure.messaging.servicebus.administration.models.TrueRuleFilter;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import com.azure.messaging.servicebus.models.SubQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static sbemu.e2e.EmulatorExtension.Builder.sub;

/**
 * Topics and subscriptions: fan-out, SQL and correlation rules made through
 * ServiceBusRuleManagerClient ($management add-rule / enumerate-rules / remove-rule), a rule's
 * SQL action, rules from Config.json, a subscription's dead-letter queue.
 */
class TopicTest {
    static final String CONFIG_RULES = "[{\"Name\":\"cfg-sql\",\"Properties\":{\"FilterType\":\"Sql\","
        + "\"SqlFilter\":{\"SqlExpression\":\"region = 'eu'\"},\"Action\":{\"SqlExpression\":\"SET routed = 'cfg'\"}}},"
        + "{\"Name\":\"cfg-corr\",\"Properties\":{\"FilterType\":\"Correlation\","
        + "\"CorrelationFilter\":{\"Label\":\"urgent\"}}}]";

    @RegisterExtension
    static final EmulatorExtension EMU = EmulatorExtension.builder()
        .topic("fan", sub("s1", null), sub("s2", null), sub("s3", null))
        .topic("rules", sub("sql", null), sub("corr", null), sub("none", null), sub("all", null))
        .topic("cfg", sub("configured", CONFIG_RULES))
        .topic("dl", sub("d", null, "MaxDeliveryCount", 1))
        .build();

    static ServiceBusSenderClient sender(String topic) {
        return EMU.track(EMU.client().sender().topicName(topic).buildClient());
    }

    static List<ServiceBusReceivedMessage> take(String topic, String sub, int n) {
        try (ServiceBusReceiverClient r = EMU.client().receiver().topicName(topic).subscriptionName(sub)
            .receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient()) {
            List<ServiceBusReceivedMessage> got = Util.receiveExact(r, n);
            assertEquals(List.of(), Util.receiveAll(r, 10, Duration.ofMillis(500)), topic + "/" + sub + " has more");
            return got;
        }
    }

    static List<String> ids(List<ServiceBusReceivedMessage> ms) {
        return ms.stream().map(ServiceBusReceivedMessage::getMessageId).toList();
    }

    static ServiceBusRuleManagerClient rules(String topic, String sub) {
        return EMU.track(EMU.client().ruleManager().topicName(topic).subscriptionName(sub).buildClient());
    }

    static List<String> ruleNames(ServiceBusRuleManagerClient rm) {
        List<String> out = new ArrayList<>();
        rm.listRules().forEach(r -> out.add(r.getName()));
        return out;
    }

    @Test
    void fanOutToEverySubscription() {
        sender("fan").sendMessages(List.of(new ServiceBusMessage("1").setMessageId("f-1"),
            new ServiceBusMessage("2").setMessageId("f-2")));
        for (String s : List.of("s1", "s2", "s3")) {
            List<ServiceBusReceivedMessage> got = take("fan", s, 2);
            assertEquals(List.of("f-1", "f-2"), ids(got), s);
        }
    }

    @Test
    void sqlAndCorrelationRulesThroughTheRuleManager() {
        ServiceBusRuleManagerClient sql = rules("rules", "sql");
        assertEquals("rules/subscriptions/sql", sql.getEntityPath().toLowerCase());
        assertEquals(List.of("$Default"), ruleNames(sql));
        sql.deleteRule("$Default");
        sql.createRule("big-eu", new CreateRuleOptions(new SqlRuleFilter("amount > 100 AND region = 'eu'"))
            .setAction(new SqlRuleAction("SET priority = 'high'; REMOVE region")));
        sql.createRule("by-subject", new CreateRuleOptions(new SqlRuleFilter("sys.Label LIKE 'inv%'")));
        assertEquals(List.of("big-eu", "by-subject"), ruleNames(sql));
        RuleProperties bigEu = sql.listRules().stream().filter(r -> r.getName().equals("big-eu")).findFirst().get();
        assertEquals("amount > 100 AND region = 'eu'", ((SqlRuleFilter) bigEu.getFilter()).getSqlExpression());
        assertEquals("SET priority = 'high'; REMOVE region", ((SqlRuleAction) bigEu.getAction()).getSqlExpression());

        ServiceBusRuleManagerClient corr = rules("rules", "corr");
        corr.deleteRule("$Default");
        CorrelationRuleFilter cf = new CorrelationRuleFilter().setCorrelationId("order-7").setLabel("invoice")
            .setContentType("application/json");
        cf.getProperties().put("tenant", "acme");
        cf.getProperties().put("tier", 3);
        corr.createRule("orders", new CreateRuleOptions(cf));
        RuleProperties back = corr.listRules().iterator().next();
        CorrelationRuleFilter cb = (CorrelationRuleFilter) back.getFilter();
        assertEquals("order-7", cb.getCorrelationId());
        assertEquals("invoice", cb.getLabel());
        assertEquals("acme", cb.getProperties().get("tenant"));
        // sbemu answers the int as an AMQP long; this SDK then passes every property value through
        // its ATOM model's KeyValue (MessageUtils.decodeRuleDescribedType -> EntityHelper) and
        // hands back a String.
        assertEquals("3", String.valueOf(cb.getProperties().get("tier")));

        ServiceBusRuleManagerClient none = rules("rules", "none");
        none.deleteRule("$Default");
        none.createRule("never", new CreateRuleOptions(new FalseRuleFilter()));
        ServiceBusRuleManagerClient all = rules("rules", "all");
        all.deleteRule("$Default");
        all.createRule("always", new CreateRuleOptions(new TrueRuleFilter()));

        ServiceBusMessage m1 = new ServiceBusMessage("a").setMessageId("m-big-eu");
        m1.getApplicationProperties().putAll(Map.of("amount", 500, "region", "eu"));
        ServiceBusMessage m2 = new ServiceBusMessage("b").setMessageId("m-small-eu");
        m2.getApplicationProperties().putAll(Map.of("amount", 5, "region", "eu"));
        ServiceBusMessage m3 = new ServiceBusMessage("c").setMessageId("m-invoice").setSubject("invoice")
            .setCorrelationId("order-7").setContentType("application/json");
        m3.getApplicationProperties().putAll(Map.of("tenant", "acme", "tier", 3));
        ServiceBusMessage m4 = new ServiceBusMessage("d").setMessageId("m-wrong-tenant").setSubject("invoice")
            .setCorrelationId("order-7").setContentType("application/json");
        m4.getApplicationProperties().putAll(Map.of("tenant", "other", "tier", 3));
        sender("rules").sendMessages(List.of(m1, m2, m3, m4));

        List<ServiceBusReceivedMessage> s = take("rules", "sql", 3);
        assertEquals(List.of("m-big-eu", "m-invoice", "m-wrong-tenant"), ids(s));
        assertEquals("high", s.get(0).getApplicationProperties().get("priority"), "the action ran");
        assertTrue(!s.get(0).getApplicationProperties().containsKey("region"), "REMOVE region");
        assertEquals(500, s.get(0).getApplicationProperties().get("amount"));
        assertEquals(List.of("m-invoice"), ids(take("rules", "corr", 1)));
        assertEquals(List.of("m-big-eu", "m-small-eu", "m-invoice", "m-wrong-tenant"), ids(take("rules", "all", 4)));
        try (ServiceBusReceiverClient r = EMU.client().receiver().topicName("rules").subscriptionName("none")
            .buildClient()) {
            assertEquals(List.of(), Util.receiveAll(r, 5, Duration.ofSeconds(1)), "the FalseFilter takes nothing");
        }
        sql.deleteRule("by-subject");
        assertEquals(List.of("big-eu"), ruleNames(sql));
    }

    @Test
    void rulesFromConfigJson() {
        ServiceBusRuleManagerClient rm = rules("cfg", "configured");
        assertEquals(List.of("cfg-corr", "cfg-sql"), ruleNames(rm));
        ServiceBusMessage eu = new ServiceBusMessage("1").setMessageId("eu");
        eu.getApplicationProperties().put("region", "eu");
        ServiceBusMessage urgent = new ServiceBusMessage("2").setMessageId("urgent").setSubject("urgent");
        ServiceBusMessage other = new ServiceBusMessage("3").setMessageId("other");
        sender("cfg").sendMessages(List.of(eu, urgent, other));
        List<ServiceBusReceivedMessage> got = take("cfg", "configured", 2);
        assertEquals(List.of("eu", "urgent"), ids(got));
        assertEquals("cfg", got.get(0).getApplicationProperties().get("routed"));
    }

    @Test
    void subscriptionDeadLetterQueue() {
        sender("dl").sendMessage(new ServiceBusMessage("x").setMessageId("dl-1"));
        try (ServiceBusReceiverClient r = EMU.client().receiver().topicName("dl").subscriptionName("d")
            .disableAutoComplete().buildClient()) {
            ServiceBusReceivedMessage m = Util.receiveExact(r, 1).get(0);
            r.abandon(m); // MaxDeliveryCount 1: dead-lettered
        }
        try (ServiceBusReceiverClient dlq = EMU.client().receiver().topicName("dl").subscriptionName("d")
            .subQueue(SubQueue.DEAD_LETTER_QUEUE).receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE)
            .buildClient()) {
            assertEquals("dl/subscriptions/d/$deadletterqueue", dlq.getEntityPath().toLowerCase());
            ServiceBusReceivedMessage d = Util.receiveExact(dlq, 1).get(0);
            assertEquals("dl-1", d.getMessageId());
            assertEquals("MaxDeliveryCountExceeded", d.getDeadLetterReason());
        }
    }
}
