package sbemu.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.amqp.exception.AmqpErrorCondition;
import com.azure.core.amqp.exception.AmqpException;
import com.azure.messaging.servicebus.ServiceBusErrorContext;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusProcessorClient;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusSessionReceiverClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Sessions: accept by id and next-available, session state, renew session lock, the session
 * processor, SessionCannotBeLocked, session lock lost.
 */
class SessionTest {
    @RegisterExtension
    static final EmulatorExtension EMU = EmulatorExtension.builder()
        .queue("byid", "RequiresSession", true)
        .queue("next", "RequiresSession", true)
        .queue("state", "RequiresSession", true)
        .queue("locked", "RequiresSession", true)
        .queue("renew", "RequiresSession", true, "LockDuration", "PT5S")
        .queue("sproc", "RequiresSession", true)
        .build();

    static void send(String q, String session, String... ids) {
        ServiceBusSenderClient s = EMU.track(EMU.client().sender().queueName(q).buildClient());
        List<ServiceBusMessage> ms = new ArrayList<>();
        for (String id : ids) {
            ms.add(new ServiceBusMessage("in " + session).setMessageId(id).setSessionId(session));
        }
        s.sendMessages(ms);
    }

    static ServiceBusSessionReceiverClient sessions(String q) {
        return EMU.track(EMU.client().sessionReceiver().queueName(q).disableAutoComplete().buildClient());
    }

    static List<String> ids(List<ServiceBusReceivedMessage> ms) {
        return ms.stream().map(ServiceBusReceivedMessage::getMessageId).toList();
    }

    @Test
    void acceptSessionById() {
        send("byid", "s-a", "a1", "a2");
        send("byid", "s-b", "b1", "b2", "b3");
        ServiceBusReceiverClient b = EMU.track(sessions("byid").acceptSession("s-b"));
        assertEquals("s-b", b.getSessionId());
        List<ServiceBusReceivedMessage> got = Util.receiveExact(b, 3);
        assertEquals(List.of("b1", "b2", "b3"), ids(got), "only s-b's messages, in order");
        for (ServiceBusReceivedMessage m : got) {
            assertEquals("s-b", m.getSessionId());
            b.complete(m);
        }
        ServiceBusReceiverClient a = EMU.track(sessions("byid").acceptSession("s-a"));
        List<ServiceBusReceivedMessage> ga = Util.receiveExact(a, 2);
        assertEquals(List.of("a1", "a2"), ids(ga));
        ga.forEach(a::complete);
        // A session that has no messages can be accepted too (and gives nothing).
        ServiceBusReceiverClient empty = EMU.track(sessions("byid").acceptSession("s-none"));
        assertEquals(List.of(), Util.receiveAll(empty, 1, Duration.ofSeconds(1)));
    }

    @Test
    void acceptNextAvailableSession() {
        send("next", "n-1", "n1-a");
        send("next", "n-2", "n2-a", "n2-b");
        ServiceBusSessionReceiverClient sr = sessions("next");
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 2; i++) {
            ServiceBusReceiverClient r = EMU.track(sr.acceptNextSession());
            String sid = r.getSessionId();
            assertTrue(sid.equals("n-1") || sid.equals("n-2"), sid);
            assertTrue(seen.add(sid), "a session is handed out once: " + sid);
            List<ServiceBusReceivedMessage> got = Util.receiveExact(r, sid.equals("n-1") ? 1 : 2);
            got.forEach(m -> assertEquals(sid, m.getSessionId()));
            got.forEach(r::complete);
        }
        assertEquals(Set.of("n-1", "n-2"), seen);
    }

    @Test
    void sessionStateRoundTrip() {
        send("state", "st-1", "st-m");
        ServiceBusReceiverClient r = EMU.track(sessions("state").acceptSession("st-1"));
        assertNull(r.getSessionState(), "no state yet");
        byte[] state = "step 3 of 7 ✓".getBytes(StandardCharsets.UTF_8);
        r.setSessionState(state);
        assertArrayEquals(state, r.getSessionState());
        byte[] big = new byte[100_000];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) i;
        }
        r.setSessionState(big);
        assertArrayEquals(big, r.getSessionState(), "a 100 kB state");
        Util.receiveExact(r, 1).forEach(r::complete);
        r.close();
        // The state outlives the receiver: another one accepting the session reads it.
        ServiceBusReceiverClient again = EMU.track(sessions("state").acceptSession("st-1"));
        assertArrayEquals(big, again.getSessionState());
        again.setSessionState(null);
        assertNull(again.getSessionState(), "cleared");
    }

    @Test
    void sessionCannotBeLockedTwice() {
        send("locked", "L", "l1");
        ServiceBusReceiverClient holder = EMU.track(sessions("locked").acceptSession("L"));
        assertEquals("L", holder.getSessionId());
        // A second client (own connection) asking for the same session.
        try (ServiceBusSessionReceiverClient other = EMU.client().retryOptions(EmulatorExtension.retry(0))
            .sessionReceiver().queueName("locked").buildClient()) {
            // The sync acceptSession surfaces the link's AmqpException as is (not wrapped in a
            // ServiceBusException as its javadoc says): its condition is what sbemu sent.
            AmqpException e = assertThrows(AmqpException.class, () -> other.acceptSession("L"));
            assertEquals(AmqpErrorCondition.SESSION_CANNOT_BE_LOCKED, e.getErrorCondition(), e.toString());
            assertFalse(e.isTransient());
        }
        Util.receiveExact(holder, 1).forEach(holder::complete);
    }

    @Test
    void renewSessionLockAndSessionLockLost() throws Exception {
        send("renew", "R", "r1", "r2");
        ServiceBusReceiverClient r = EMU.track(sessions("renew").acceptSession("R"));
        List<ServiceBusReceivedMessage> got = Util.receiveExact(r, 2);
        OffsetDateTime first = got.get(0).getLockedUntil();
        Thread.sleep(1500); // so that the renewed lock ends visibly later
        OffsetDateTime renewed = r.renewSessionLock();
        assertTrue(renewed.isAfter(first.plusSeconds(1)), first + " -> " + renewed);
        // Past the first lock's end (emulator time), the renewed session lock still holds.
        Duration offset = Util.clockOffset(EMU.emu());
        Emulator.waitFor("the first lock's end", Duration.ofSeconds(10),
            () -> OffsetDateTime.now().plus(offset).isAfter(first.plusNanos(300_000_000)));
        r.complete(got.get(0));
        // The namespace clock passes the renewed lock: the session lock is lost.
        Util.advanceClock(EMU.emu(), "PT10S");
        Util.expectReason(ServiceBusFailureReason.SESSION_LOCK_LOST, () -> r.complete(got.get(1)));
        // The session can be accepted again, with the message back (DeliveryCount 1).
        try (ServiceBusSessionReceiverClient sr = EMU.client().sessionReceiver().queueName("renew")
            .disableAutoComplete().buildClient()) {
            ServiceBusReceiverClient again = sr.acceptSession("R");
            ServiceBusReceivedMessage m = Util.receiveExact(again, 1).get(0);
            assertEquals("r2", m.getMessageId());
            assertEquals(1, m.getDeliveryCount());
            again.complete(m);
            again.close();
        }
    }

    @Test
    void sessionProcessorTakesEverySession() throws Exception {
        for (int s = 0; s < 4; s++) {
            String[] ids = new String[5];
            for (int i = 0; i < 5; i++) {
                ids[i] = "p" + s + "-" + i;
            }
            send("sproc", "ps-" + s, ids);
        }
        Map<String, List<String>> bySession = new ConcurrentHashMap<>();
        List<ServiceBusErrorContext> errors = new CopyOnWriteArrayList<>();
        ServiceBusProcessorClient p = EMU.client().sessionProcessor().queueName("sproc").maxConcurrentSessions(2)
            .sessionIdleTimeout(Duration.ofSeconds(1)) // move on from a drained session quickly
            .processMessage(ctx -> bySession.computeIfAbsent(ctx.getMessage().getSessionId(),
                k -> new CopyOnWriteArrayList<>()).add(ctx.getMessage().getMessageId()))
            .processError(errors::add)
            .buildProcessorClient();
        try {
            p.start();
            Emulator.waitFor("all 20 messages", Duration.ofSeconds(60),
                () -> bySession.values().stream().mapToInt(List::size).sum() >= 20);
            try (ServiceBusReceiverClient peek = EMU.client().receiver().queueName("sproc").buildClient()) {
                Emulator.waitFor("the processor to complete all 20", Duration.ofSeconds(15),
                    () -> peek.peekMessage(0) == null);
            }
        } finally {
            p.close();
        }
        assertEquals(4, bySession.size(), bySession.toString());
        for (int s = 0; s < 4; s++) {
            List<String> want = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                want.add("p" + s + "-" + i);
            }
            assertEquals(want, bySession.get("ps-" + s), "a session's messages in order, once each");
        }
        assertEquals(List.of(), errors.stream().map(e -> e.getException().toString()).toList());
    }
}
