package sbemu.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.amqp.exception.AmqpErrorCondition;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Errors as this SDK maps them (ServiceBusException.getReason()): entity not found, unauthorized,
 * message size exceeded, quota exceeded (MaxSizeInMegabytes), entity disabled. Lock lost, session
 * lock lost and session cannot be locked are in ReceiveTest and SessionTest, server busy in
 * PgOutageTest.
 */
class ErrorsTest {
    @RegisterExtension
    static final EmulatorExtension EMU = EmulatorExtension.builder()
        .queue("exists")
        .queue("small", "MaxSizeInMegabytes", 1)
        .build();

    @Test
    void entityNotFound() {
        try (ServiceBusSenderClient s = EMU.client().retryOptions(EmulatorExtension.retry(0)).sender()
            .queueName("no-such-queue").buildClient()) {
            ServiceBusException e = Util.expectReason(ServiceBusFailureReason.MESSAGING_ENTITY_NOT_FOUND,
                () -> s.sendMessage(new ServiceBusMessage("x")));
            assertFalse(e.isTransient());
            assertTrue(e.getMessage().contains("no-such-queue"), e.getMessage());
        }
        try (ServiceBusReceiverClient r = EMU.client().retryOptions(EmulatorExtension.retry(0)).receiver()
            .queueName("no-such-queue").buildClient()) {
            Util.expectReason(ServiceBusFailureReason.MESSAGING_ENTITY_NOT_FOUND, r::peekMessage);
        }
        try (ServiceBusReceiverClient r = EMU.client().retryOptions(EmulatorExtension.retry(0)).receiver()
            .topicName("no-such-topic").subscriptionName("s").buildClient()) {
            // The sync receive wraps the link's AmqpException in "The receiver client is terminated".
            Util.expectCondition(AmqpErrorCondition.NOT_FOUND,
                () -> r.receiveMessages(1, Duration.ofSeconds(5)).stream().count());
        }
    }

    @Test
    void unauthorizedWithAWrongKey() {
        String wrong = EMU.emu().connectionString(Emulator.SAS_KEY_NAME, "not-the-key");
        try (ServiceBusSenderClient s = new com.azure.messaging.servicebus.ServiceBusClientBuilder()
            .connectionString(wrong).retryOptions(EmulatorExtension.retry(0)).sender().queueName("exists")
            .buildClient()) {
            ServiceBusException e = Util.expectReason(ServiceBusFailureReason.UNAUTHORIZED,
                () -> s.sendMessage(new ServiceBusMessage("x")));
            assertFalse(e.isTransient());
        }
        // Any other key name that may name a namespace puts the client in that namespace (README
        // "Namespaces"); one with a '.' cannot, and is refused.
        String wrongName = EMU.emu().connectionString("Some.Other.KeyName", Emulator.SAS_KEY);
        try (ServiceBusReceiverClient r = new com.azure.messaging.servicebus.ServiceBusClientBuilder()
            .connectionString(wrongName).retryOptions(EmulatorExtension.retry(0)).receiver().queueName("exists")
            .buildClient()) {
            Util.expectReason(ServiceBusFailureReason.UNAUTHORIZED, r::peekMessage);
        }
        // Nothing got in.
        try (ServiceBusReceiverClient r = EMU.client().receiver().queueName("exists").buildClient()) {
            assertEquals(null, r.peekMessage(0));
        }
    }

    @Test
    void messageSizeExceeded() {
        try (ServiceBusSenderClient s = EMU.client().sender().queueName("exists").buildClient()) {
            ServiceBusException e = Util.expectReason(ServiceBusFailureReason.MESSAGE_SIZE_EXCEEDED,
                () -> s.sendMessage(new ServiceBusMessage(new byte[300 * 1024])));
            assertFalse(e.isTransient());
        }
    }

    /** sbemu enforces MaxSizeInMegabytes: a 1 MB queue takes about five messages of 200 kB. */
    @Test
    void quotaExceeded() {
        byte[] body = new byte[200 * 1024];
        int accepted = 0;
        ServiceBusException refused = null;
        try (ServiceBusSenderClient s = EMU.client().retryOptions(EmulatorExtension.retry(0)).sender()
            .queueName("small").buildClient()) {
            for (int i = 1; i <= 8 && refused == null; i++) {
                try {
                    s.sendMessage(new ServiceBusMessage(body).setMessageId("big-" + i));
                    accepted++;
                } catch (ServiceBusException e) {
                    refused = e;
                }
            }
            assertTrue(refused != null, "all 8 sends of 200 kB into a 1 MB queue were accepted");
            assertEquals(ServiceBusFailureReason.QUOTA_EXCEEDED, refused.getReason(), refused.toString());
            assertTrue(accepted >= 4 && accepted <= 5, "accepted " + accepted + " before the refusal");
            // Receiving makes room again.
            try (ServiceBusReceiverClient r = EMU.client().receiver().queueName("small")
                .receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient()) {
                List<ServiceBusReceivedMessage> two = Util.receiveExact(r, 2);
                assertEquals(List.of("big-1", "big-2"), two.stream().map(ServiceBusReceivedMessage::getMessageId)
                    .toList());
            }
            s.sendMessage(new ServiceBusMessage(body).setMessageId("fits-again"));
        }
    }
}
