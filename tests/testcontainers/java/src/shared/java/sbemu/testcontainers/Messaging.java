package sbemu.testcontainers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.testcontainers.utility.DockerImageName;

/** What the tests share: the image as the README names it, and a message both ways. */
final class Messaging {
    private Messaging() {}

    /** The README's line: sbemu's image as a compatible substitute for Microsoft's. */
    static DockerImageName sbemuImage() {
        return DockerImageName.parse(System.getProperty("sbemu.image", "sbemu:latest"))
            .asCompatibleSubstituteFor("mcr.microsoft.com/azure-messaging/servicebus-emulator");
    }

    /**
     * Sends one message (application property via=java) to {@code entity} and receives it back
     * from the queue {@code entity} or from subscription {@code sub} of the topic, peek-lock then
     * complete; then nothing is left.
     */
    static void roundTrip(String connectionString, String entity, String sub) {
        String body = "hello from testcontainers-java " + UUID.randomUUID();
        try (ServiceBusSenderClient sender = new ServiceBusClientBuilder()
                .connectionString(connectionString)
                .sender()
                .topicName(entity) // a queue's name works as well: it is only the link's address
                .buildClient()) {
            ServiceBusMessage message = new ServiceBusMessage(body);
            message.getApplicationProperties().put("via", "java");
            sender.sendMessage(message);
        }
        ServiceBusClientBuilder.ServiceBusReceiverClientBuilder rb = new ServiceBusClientBuilder()
            .connectionString(connectionString)
            .receiver()
            .disableAutoComplete();
        rb = sub == null ? rb.queueName(entity) : rb.topicName(entity).subscriptionName(sub);
        try (ServiceBusReceiverClient receiver = rb.buildClient()) {
            List<ServiceBusReceivedMessage> got = new ArrayList<>();
            receiver.receiveMessages(1, Duration.ofSeconds(20)).forEach(got::add);
            assertEquals(1, got.size(), "one message from " + entity + (sub == null ? "" : "/" + sub));
            assertEquals(body, got.get(0).getBody().toString());
            assertEquals("java", got.get(0).getApplicationProperties().get("via"));
            receiver.complete(got.get(0));
            List<ServiceBusReceivedMessage> rest = new ArrayList<>();
            receiver.receiveMessages(1, Duration.ofSeconds(2)).forEach(rest::add);
            assertTrue(rest.isEmpty(), "the completed message is gone");
        }
    }
}
