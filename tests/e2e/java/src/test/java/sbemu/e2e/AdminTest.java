package sbemu.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.exception.ResourceExistsException;
import com.azure.core.exception.ResourceNotFoundException;
import com.azure.core.http.HttpClient;
import com.azure.core.http.HttpPipelinePosition;
import com.azure.core.http.netty.NettyAsyncHttpClientBuilder;
import com.azure.core.http.policy.HttpPipelinePolicy;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClient;
import com.azure.messaging.servicebus.administration.ServiceBusAdministrationClientBuilder;
import com.azure.messaging.servicebus.administration.models.CorrelationRuleFilter;
import com.azure.messaging.servicebus.administration.models.CreateQueueOptions;
import com.azure.messaging.servicebus.administration.models.CreateRuleOptions;
import com.azure.messaging.servicebus.administration.models.CreateSubscriptionOptions;
import com.azure.messaging.servicebus.administration.models.CreateTopicOptions;
import com.azure.messaging.servicebus.administration.models.EntityStatus;
import com.azure.messaging.servicebus.administration.models.MessagingSku;
import com.azure.messaging.servicebus.administration.models.NamespaceProperties;
import com.azure.messaging.servicebus.administration.models.QueueProperties;
import com.azure.messaging.servicebus.administration.models.QueueRuntimeProperties;
import com.azure.messaging.servicebus.administration.models.RuleProperties;
import com.azure.messaging.servicebus.administration.models.SqlRuleAction;
import com.azure.messaging.servicebus.administration.models.SqlRuleFilter;
import com.azure.messaging.servicebus.administration.models.SubscriptionProperties;
import com.azure.messaging.servicebus.administration.models.SubscriptionRuntimeProperties;
import com.azure.messaging.servicebus.administration.models.TopicProperties;
import com.azure.messaging.servicebus.administration.models.TopicRuntimeProperties;
import com.azure.messaging.servicebus.administration.models.TrueRuleFilter;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ServiceBusAdministrationClient (sync) with the emulator connection string unmodified.
 *
 * <p>How this SDK dials (7.17.19, read in ServiceBusAdministrationClientBuilder and EntitiesImpl):
 * connectionString() keeps only the Endpoint's host ({@code properties.getEndpoint().getHost()}),
 * and every operation is declared {@code @Host("https://{endpoint}")}: so it goes to
 * https://localhost/ on port 443, whatever the Endpoint's port, and UseDevelopmentEmulator is not
 * looked at (azure-sdk-for-java #48886). sbemu serves HTTPS (the ATOM API) on its TLS port, so a
 * user runs it with {@code --amqps-port 443} and trusts its self-signed certificate
 * (DATA-DIR/tls/cert.pem, CN and SAN localhost) - here through the SDK's own HTTP client options,
 * a Netty client whose SslContext trusts that file; a JVM-wide truststore works too. Port 443 is
 * forced by the SDK, not chosen: run.sh runs the suite in a private network namespace when 443 is
 * taken.
 */
class AdminTest {
    @RegisterExtension
    static final EmulatorExtension EMU = EmulatorExtension.builder()
        .topic("routed", EmulatorExtension.Builder.sub("all", null))
        .amqpsPort(443) // the SDK dials https://<host>:443, see above
        .build();

    static ServiceBusAdministrationClient admin;
    static final List<URL> URLS = new CopyOnWriteArrayList<>();

    /** What a user does: the SDK's HttpClient, with a Netty client trusting the emulator's cert. */
    static HttpClient trustingHttpClient() throws SSLException {
        SslContext ssl = SslContextBuilder.forClient().trustManager(EMU.emu().certPath().toFile()).build();
        return new NettyAsyncHttpClientBuilder(
            reactor.netty.http.client.HttpClient.create().secure(spec -> spec.sslContext(ssl))).build();
    }

    @BeforeAll
    static void buildAdmin() throws Exception {
        HttpPipelinePolicy record = (ctx, next) -> {
            URLS.add(ctx.getHttpRequest().getUrl());
            return next.process();
        };
        admin = new ServiceBusAdministrationClientBuilder()
            .connectionString(EMU.connectionString()) // Endpoint=sb://localhost:<amqp-port>;...
            .httpClient(trustingHttpClient())
            .addPolicy(record)
            .buildClient();
    }

    @Test
    void dialsHttpsOnPort443AndNeedsTheCertificateTrusted() {
        URLS.clear();
        NamespaceProperties ns = admin.getNamespaceProperties();
        assertNotNull(ns.getName());
        URL u = URLS.get(0);
        assertEquals("https", u.getProtocol());
        assertEquals("localhost", u.getHost());
        assertEquals(-1, u.getPort(), "no port: https's 443, not the Endpoint's " + EMU.emu().amqpPort());
        assertEquals("/$namespaceinfo", u.getPath());
        assertEquals(MessagingSku.STANDARD, ns.getMessagingSku());
        assertNotNull(ns.getCreatedTime());
        assertNotNull(ns.getModifiedTime());

        // Without trusting the certificate the default client refuses the self-signed one.
        ServiceBusAdministrationClient untrusting = new ServiceBusAdministrationClientBuilder()
            .connectionString(EMU.connectionString()).buildClient();
        RuntimeException e = assertThrows(RuntimeException.class, untrusting::getNamespaceProperties);
        Throwable c = e;
        while (c != null && !(c instanceof SSLException)) {
            c = c.getCause();
        }
        assertNotNull(c, "an SSL failure, got " + e);
    }

    @Test
    void queues() {
        CreateQueueOptions o = new CreateQueueOptions()
            .setLockDuration(Duration.ofSeconds(45))
            .setMaxDeliveryCount(7)
            .setDefaultMessageTimeToLive(Duration.ofHours(2))
            .setDeadLetteringOnMessageExpiration(true)
            .setDuplicateDetectionRequired(true)
            .setDuplicateDetectionHistoryTimeWindow(Duration.ofMinutes(3))
            .setMaxSizeInMegabytes(2048)
            .setUserMetadata("made by AdminTest");
        QueueProperties q = admin.createQueue("adm-q", o);
        assertEquals("adm-q", q.getName());
        assertEquals(Duration.ofSeconds(45), q.getLockDuration());
        assertEquals(7, q.getMaxDeliveryCount());
        assertEquals(Duration.ofHours(2), q.getDefaultMessageTimeToLive());
        assertTrue(q.isDeadLetteringOnMessageExpiration());
        assertTrue(q.isDuplicateDetectionRequired());
        assertEquals(Duration.ofMinutes(3), q.getDuplicateDetectionHistoryTimeWindow());
        assertEquals(2048, q.getMaxSizeInMegabytes());
        assertEquals("made by AdminTest", q.getUserMetadata());
        assertFalse(q.isSessionRequired());
        assertEquals(EntityStatus.ACTIVE, q.getStatus());
        admin.createQueue("adm-q2");
        assertThrows(ResourceExistsException.class, () -> admin.createQueue("adm-q"));

        assertTrue(admin.getQueueExists("adm-q"));
        assertFalse(admin.getQueueExists("adm-nope"));
        assertThrows(ResourceNotFoundException.class, () -> admin.getQueue("adm-nope"));
        QueueProperties got = admin.getQueue("adm-q");
        assertEquals(7, got.getMaxDeliveryCount());

        got.setMaxDeliveryCount(3).setLockDuration(Duration.ofSeconds(20)).setUserMetadata("updated")
            .setStatus(EntityStatus.SEND_DISABLED);
        QueueProperties up = admin.updateQueue(got);
        assertEquals(3, up.getMaxDeliveryCount());
        assertEquals(Duration.ofSeconds(20), admin.getQueue("adm-q").getLockDuration());
        assertEquals("updated", admin.getQueue("adm-q").getUserMetadata());
        assertEquals(EntityStatus.SEND_DISABLED, admin.getQueue("adm-q").getStatus());
        admin.updateQueue(admin.getQueue("adm-q").setStatus(EntityStatus.ACTIVE));

        List<String> names = new ArrayList<>();
        admin.listQueues().forEach(p -> names.add(p.getName()));
        assertTrue(names.containsAll(List.of("adm-q", "adm-q2")), names.toString());

        // Runtime properties follow the messages.
        ServiceBusSenderClient s = EMU.track(EMU.client().sender().queueName("adm-q").buildClient());
        for (int i = 0; i < 3; i++) {
            s.sendMessage(new ServiceBusMessage("r" + i).setMessageId("rt-" + i));
        }
        s.scheduleMessage(new ServiceBusMessage("later").setMessageId("rt-s"),
            java.time.OffsetDateTime.now().plusHours(1));
        QueueRuntimeProperties rt = admin.getQueueRuntimeProperties("adm-q");
        assertEquals("adm-q", rt.getName());
        assertEquals(3, rt.getActiveMessageCount());
        assertEquals(1, rt.getScheduledMessageCount());
        assertEquals(4, rt.getTotalMessageCount());
        assertEquals(0, rt.getDeadLetterMessageCount());
        assertTrue(rt.getSizeInBytes() > 0);
        assertNotNull(rt.getCreatedAt());

        admin.deleteQueue("adm-q2");
        assertFalse(admin.getQueueExists("adm-q2"));
        assertThrows(ResourceNotFoundException.class, () -> admin.deleteQueue("adm-q2"));
    }

    @Test
    void topicsSubscriptionsAndRules() {
        TopicProperties t = admin.createTopic("adm-t", new CreateTopicOptions()
            .setDefaultMessageTimeToLive(Duration.ofMinutes(30)).setMaxSizeInMegabytes(1024));
        assertEquals("adm-t", t.getName());
        assertEquals(Duration.ofMinutes(30), t.getDefaultMessageTimeToLive());
        // This SDK's CreateTopicOptions sends SupportOrdering=false unless told (its field's default).
        assertFalse(t.isOrderingSupported());
        assertThrows(ResourceExistsException.class, () -> admin.createTopic("adm-t"));
        admin.updateTopic(admin.getTopic("adm-t").setUserMetadata("topic meta").setOrderingSupported(true));
        assertEquals("topic meta", admin.getTopic("adm-t").getUserMetadata());
        assertTrue(admin.getTopic("adm-t").isOrderingSupported());
        List<String> topics = new ArrayList<>();
        admin.listTopics().forEach(p -> topics.add(p.getName()));
        assertTrue(topics.containsAll(List.of("adm-t", "routed")), topics.toString());

        SubscriptionProperties red = admin.createSubscription("adm-t", "red", new CreateSubscriptionOptions()
            .setMaxDeliveryCount(4).setLockDuration(Duration.ofSeconds(30)));
        assertEquals("red", red.getSubscriptionName());
        assertEquals("adm-t", red.getTopicName());
        assertEquals(4, red.getMaxDeliveryCount());
        // A subscription created with a rule of its own instead of $Default.
        admin.createSubscription("adm-t", "big", "amount",
            new CreateSubscriptionOptions(), new CreateRuleOptions(new SqlRuleFilter("amount > 100")));
        admin.createSubscription("adm-t", "gone");
        assertThrows(ResourceExistsException.class, () -> admin.createSubscription("adm-t", "red"));
        admin.updateSubscription(admin.getSubscription("adm-t", "red").setMaxDeliveryCount(6));
        assertEquals(6, admin.getSubscription("adm-t", "red").getMaxDeliveryCount());
        assertTrue(admin.getSubscriptionExists("adm-t", "red"));
        List<String> subs = new ArrayList<>();
        admin.listSubscriptions("adm-t").forEach(p -> subs.add(p.getSubscriptionName()));
        assertEquals(List.of("big", "gone", "red"), subs.stream().sorted().toList());
        admin.deleteSubscription("adm-t", "gone");
        assertFalse(admin.getSubscriptionExists("adm-t", "gone"));

        // Rules on "red": $Default replaced by a correlation filter and a SQL filter with an action.
        List<String> rules = new ArrayList<>();
        admin.listRules("adm-t", "red").forEach(r -> rules.add(r.getName()));
        assertEquals(List.of("$Default"), rules);
        assertTrue(admin.getRule("adm-t", "red", "$Default").getFilter() instanceof TrueRuleFilter);
        admin.deleteRule("adm-t", "red", "$Default");
        CorrelationRuleFilter corr = new CorrelationRuleFilter().setLabel("red").setCorrelationId("c-red");
        corr.getProperties().put("shade", "dark");
        // Mind this SDK's argument order: createRule(topic, RULE, SUBSCRIPTION, options).
        admin.createRule("adm-t", "by-corr", "red", new CreateRuleOptions(corr));
        admin.createRule("adm-t", "by-sql", "red", new CreateRuleOptions(new SqlRuleFilter("color = 'red'"))
            .setAction(new SqlRuleAction("SET tagged = 'yes'")));
        RuleProperties c = admin.getRule("adm-t", "red", "by-corr");
        CorrelationRuleFilter back = (CorrelationRuleFilter) c.getFilter();
        assertEquals("red", back.getLabel());
        assertEquals("c-red", back.getCorrelationId());
        assertEquals("dark", back.getProperties().get("shade"));
        RuleProperties sql = admin.getRule("adm-t", "red", "by-sql");
        assertEquals("color = 'red'", ((SqlRuleFilter) sql.getFilter()).getSqlExpression());
        assertEquals("SET tagged = 'yes'", ((SqlRuleAction) sql.getAction()).getSqlExpression());
        sql.setFilter(new SqlRuleFilter("color = 'crimson'"));
        admin.updateRule("adm-t", "red", sql);
        assertEquals("color = 'crimson'",
            ((SqlRuleFilter) admin.getRule("adm-t", "red", "by-sql").getFilter()).getSqlExpression());
        assertThrows(ResourceExistsException.class,
            () -> admin.createRule("adm-t", "by-sql", "red", new CreateRuleOptions(new TrueRuleFilter())));
        rules.clear();
        admin.listRules("adm-t", "red").forEach(r -> rules.add(r.getName()));
        assertEquals(List.of("by-corr", "by-sql"), rules);

        // The rules route: messages sent to the topic land where the filters say.
        ServiceBusSenderClient s = EMU.track(EMU.client().sender().topicName("adm-t").buildClient());
        ServiceBusMessage m1 = new ServiceBusMessage("1").setMessageId("m-corr").setSubject("red")
            .setCorrelationId("c-red");
        m1.getApplicationProperties().put("shade", "dark");
        ServiceBusMessage m2 = new ServiceBusMessage("2").setMessageId("m-sql");
        m2.getApplicationProperties().put("color", "crimson");
        m2.getApplicationProperties().put("amount", 500);
        ServiceBusMessage m3 = new ServiceBusMessage("3").setMessageId("m-none");
        m3.getApplicationProperties().put("amount", 5);
        s.sendMessages(List.of(m1, m2, m3));
        SubscriptionRuntimeProperties rt = admin.getSubscriptionRuntimeProperties("adm-t", "red");
        assertEquals(2, rt.getActiveMessageCount());
        assertEquals(2, rt.getTotalMessageCount());
        assertEquals(1, admin.getSubscriptionRuntimeProperties("adm-t", "big").getActiveMessageCount());
        TopicRuntimeProperties trt = admin.getTopicRuntimeProperties("adm-t");
        assertEquals(2, trt.getSubscriptionCount());
        assertTrue(trt.getSizeInBytes() >= 0);
        try (ServiceBusReceiverClient r = EMU.client().receiver().topicName("adm-t").subscriptionName("red")
            .receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient()) {
            List<ServiceBusReceivedMessage> got = Util.receiveExact(r, 2);
            assertEquals(List.of("m-corr", "m-sql"), got.stream().map(ServiceBusReceivedMessage::getMessageId).toList());
            assertEquals("yes", got.get(1).getApplicationProperties().get("tagged"), "the rule's action ran");
        }

        admin.deleteRule("adm-t", "red", "by-corr");
        assertThrows(ResourceNotFoundException.class, () -> admin.getRule("adm-t", "red", "by-corr"));
        admin.deleteTopic("adm-t");
        assertFalse(admin.getTopicExists("adm-t"));
        assertFalse(admin.getSubscriptionExists("adm-t", "red"), "its subscriptions went with it");
    }

    @Test
    void entityNotFoundOverAmqpAfterDelete() {
        admin.createQueue("adm-short");
        ServiceBusSenderClient s = EMU.track(EMU.client().sender().queueName("adm-short").buildClient());
        s.sendMessage(new ServiceBusMessage("x"));
        admin.deleteQueue("adm-short");
        try (ServiceBusSenderClient s2 = EMU.client().retryOptions(EmulatorExtension.retry(0)).sender()
            .queueName("adm-short").buildClient()) {
            Util.expectReason(com.azure.messaging.servicebus.ServiceBusFailureReason.MESSAGING_ENTITY_NOT_FOUND,
                () -> s2.sendMessage(new ServiceBusMessage("y")));
        }
    }
}
