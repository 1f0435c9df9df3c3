package sbemu.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The smallest round trip: one message sent, received in peek-lock and completed. */
class SendReceiveTest {
    @RegisterExtension
    static final EmulatorExtension EMU = EmulatorExtension.builder().queue("q").build();

    @Test
    void sendOneReceiveAndComplete() {
        ServiceBusSenderClient sender = EMU.track(EMU.client().sender().queueName("q").buildClient());
        sender.sendMessage(new ServiceBusMessage("hello").setMessageId("m1"));
        ServiceBusReceiverClient receiver = EMU.track(EMU.client().receiver().queueName("q")
            .receiveMode(ServiceBusReceiveMode.PEEK_LOCK).disableAutoComplete().buildClient());
        List<ServiceBusReceivedMessage> got = new ArrayList<>();
        receiver.receiveMessages(1, Duration.ofSeconds(10)).forEach(got::add);
        assertEquals(1, got.size());
        ServiceBusReceivedMessage m = got.get(0);
        assertEquals("m1", m.getMessageId());
        assertEquals("hello", m.getBody().toString());
        assertNotNull(m.getLockToken());
        receiver.complete(m);
        assertEquals(null, receiver.peekMessage(), "the queue is empty after complete");
    }
}
