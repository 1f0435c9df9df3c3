package sbemu.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.amqp.AmqpTransportType;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.DeadLetterOptions;
import com.azure.messaging.servicebus.models.SubQueue;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * AMQP over WebSockets (AmqpTransportType.AMQP_WEB_SOCKETS). How this SDK dials (azure-core-amqp
 * 2.12.0 ReactorHandlerProvider, WebSocketsConnectionHandler): always TLS (wss), to the host and
 * port of the Endpoint (or of customEndpointAddress), path /$servicebus/websocket, subprotocol
 * AMQPWSB10; with UseDevelopmentEmulator=true it does not check the certificate
 * (SslDomain.VerifyMode.ANONYMOUS_PEER). So the unmodified emulator connection string works as is:
 * sbemu's AMQP port tells TLS from AMQP by the first bytes and serves WebSockets inside it. A
 * customEndpointAddress pointing at the TLS port (--amqps-port) works too.
 */
class WebSocketTest {
    static final int LARGE = 1024 * 1024;

    @RegisterExtension
    static final EmulatorExtension EMU = EmulatorExtension.builder()
        .queue("ws").queue("ws-custom")
        .amqpsPort(-1)
        // debug: the log says how each connection came in ("accepted (ws...)")
        .args("--max-message-size", String.valueOf(2 * LARGE), "--log-level", "debug")
        .build();

    static int wsConnections() {
        Matcher m = Pattern.compile("accepted \\(ws").matcher(EMU.emu().log());
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    /** Small and 1 MB messages both ways, abandon, dead-letter, complete: all over one WebSocket. */
    static void roundTrip(ServiceBusClientBuilder b, String q) {
        ServiceBusSenderClient s = EMU.track(b.sender().queueName(q).buildClient());
        byte[] large = new byte[LARGE];
        Arrays.fill(large, (byte) 7);
        s.sendMessages(List.of(new ServiceBusMessage("over a WebSocket").setMessageId("small"),
            new ServiceBusMessage(large).setMessageId("large")));
        ServiceBusReceiverClient r = EMU.track(b.receiver().queueName(q).disableAutoComplete().buildClient());
        List<ServiceBusReceivedMessage> got = Util.receiveExact(r, 2);
        assertEquals("small", got.get(0).getMessageId());
        assertEquals("over a WebSocket", got.get(0).getBody().toString());
        assertArrayEquals(large, got.get(1).getBody().toBytes(), "1 MB intact");
        r.abandon(got.get(0));
        r.deadLetter(got.get(1), new DeadLetterOptions().setDeadLetterReason("over-ws"));
        ServiceBusReceivedMessage again = Util.receiveExact(r, 1).get(0);
        assertEquals("small", again.getMessageId());
        assertEquals(1, again.getDeliveryCount());
        r.complete(again);
        ServiceBusReceiverClient dlq = EMU.track(b.receiver().queueName(q).subQueue(SubQueue.DEAD_LETTER_QUEUE)
            .disableAutoComplete().buildClient());
        ServiceBusReceivedMessage dead = Util.receiveExact(dlq, 1).get(0);
        assertEquals("over-ws", dead.getDeadLetterReason());
        dlq.complete(dead);
        assertEquals(null, r.peekMessage(0), "empty after settling");
    }

    @Test
    void theEmulatorConnectionStringOverWebSockets() {
        int before = wsConnections();
        ServiceBusClientBuilder b = EMU.client().transportType(AmqpTransportType.AMQP_WEB_SOCKETS);
        roundTrip(b, "ws");
        assertTrue(wsConnections() > before, "the client came in over a WebSocket:\n" + EMU.emu().log());
    }

    @Test
    void aCustomEndpointOnTheTlsPort() {
        int before = wsConnections();
        ServiceBusClientBuilder b = EMU.client().transportType(AmqpTransportType.AMQP_WEB_SOCKETS)
            .customEndpointAddress("https://localhost:" + EMU.emu().amqpsPort());
        roundTrip(b, "ws-custom");
        assertTrue(wsConnections() > before, "the client came in over a WebSocket");
    }
}
