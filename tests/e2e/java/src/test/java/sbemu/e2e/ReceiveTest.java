package sbemu.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.messaging.servicebus.ServiceBusErrorContext;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusProcessorClient;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.AbandonOptions;
import com.azure.messaging.servicebus.models.DeadLetterOptions;
import com.azure.messaging.servicebus.models.ServiceBusMessageState;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import com.azure.messaging.servicebus.models.SubQueue;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Receiving and settling: peek-lock and receive-and-delete, the processor, complete, abandon with
 * properties, defer and receive deferred, dead-letter and the dead-letter subqueue,
 * MaxDeliveryCount, renew lock, lock lost, peek from a sequence number.
 */
class ReceiveTest {
    @RegisterExtension
    static final EmulatorExtension EMU = EmulatorExtension.builder()
        .queue("modes").queue("settle").queue("defer").queue("dlq").queue("peek").queue("proc")
        .queue("maxdc", "MaxDeliveryCount", 2)
        .queue("renew", "LockDuration", "PT5S") // the shortest Service Bus allows
        .queue("lost", "LockDuration", "PT5S")
        .build();

    static ServiceBusSenderClient sender(String q) {
        return EMU.track(EMU.client().sender().queueName(q).buildClient());
    }

    static ServiceBusReceiverClient peekLock(String q) {
        return EMU.track(EMU.client().receiver().queueName(q).receiveMode(ServiceBusReceiveMode.PEEK_LOCK)
            .disableAutoComplete().buildClient());
    }

    static void send(String q, String... ids) {
        ServiceBusSenderClient s = sender(q);
        for (String id : ids) {
            s.sendMessage(new ServiceBusMessage("body of " + id).setMessageId(id));
        }
    }

    static List<String> ids(Iterable<ServiceBusReceivedMessage> ms) {
        List<String> out = new ArrayList<>();
        ms.forEach(m -> out.add(m.getMessageId()));
        return out;
    }

    @Test
    void peekLockThenReceiveAndDelete() {
        send("modes", "a", "b");
        ServiceBusReceiverClient pl = peekLock("modes");
        ServiceBusReceivedMessage a = Util.receiveExact(pl, 1).get(0);
        assertEquals("a", a.getMessageId());
        assertNotNull(a.getLockToken());
        assertTrue(a.getLockedUntil().isAfter(OffsetDateTime.now().plus(Util.clockOffset(EMU.emu())).plusSeconds(30)),
            "LockDuration PT1M");
        pl.complete(a);
        try (ServiceBusReceiverClient rad = EMU.client().receiver().queueName("modes")
            .receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient()) {
            ServiceBusReceivedMessage b = Util.receiveExact(rad, 1).get(0);
            assertEquals("b", b.getMessageId());
            assertEquals(null, b.getLockedUntil(), "no lock in receive-and-delete");
        }
        assertNull(pl.peekMessage(), "both gone");
    }

    @Test
    void completeAndAbandonWithProperties() {
        send("settle", "s1");
        ServiceBusReceiverClient r = peekLock("settle");
        ServiceBusReceivedMessage first = Util.receiveExact(r, 1).get(0);
        assertEquals(0, first.getDeliveryCount());
        r.abandon(first, new AbandonOptions().setPropertiesToModify(Map.of("abandoned", "yes", "n", 7)));
        ServiceBusReceivedMessage again = Util.receiveExact(r, 1).get(0);
        assertEquals("s1", again.getMessageId());
        assertEquals(1, again.getDeliveryCount(), "an abandon counts a delivery");
        assertEquals("yes", again.getApplicationProperties().get("abandoned"));
        assertEquals(7, again.getApplicationProperties().get("n"));
        assertEquals(first.getSequenceNumber(), again.getSequenceNumber());
        assertNotEquals(first.getLockToken(), again.getLockToken(), "a new lock");
        r.complete(again);
        assertNull(r.peekMessage(), "completed");
        // A settled message cannot be settled again: this SDK says so itself, before any wire
        // (IllegalArgumentException naming the lock token).
        org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, () -> r.complete(again));
    }

    @Test
    void deferAndReceiveDeferredBySequenceNumber() {
        send("defer", "d1", "d2", "d3");
        ServiceBusReceiverClient r = peekLock("defer");
        List<ServiceBusReceivedMessage> got = Util.receiveExact(r, 3);
        for (ServiceBusReceivedMessage m : got) {
            r.defer(m);
        }
        assertEquals(List.of(), Util.receiveAll(r, 3, Duration.ofSeconds(1)), "deferred messages are not received");
        List<ServiceBusReceivedMessage> peeked = new ArrayList<>();
        r.peekMessages(10, got.get(0).getSequenceNumber()).forEach(peeked::add);
        assertEquals(List.of("d1", "d2", "d3"), ids(peeked));
        peeked.forEach(m -> assertEquals(ServiceBusMessageState.DEFERRED, m.getState(), m.getMessageId()));

        ServiceBusReceivedMessage d1 = r.receiveDeferredMessage(got.get(0).getSequenceNumber());
        assertEquals("d1", d1.getMessageId());
        assertEquals(ServiceBusMessageState.DEFERRED, d1.getState());
        assertNotNull(d1.getLockToken());
        r.complete(d1);
        List<ServiceBusReceivedMessage> rest = new ArrayList<>();
        r.receiveDeferredMessageBatch(List.of(got.get(1).getSequenceNumber(), got.get(2).getSequenceNumber()))
            .forEach(rest::add);
        assertEquals(List.of("d2", "d3"), ids(rest));
        r.complete(rest.get(0));
        // Abandoning a deferred message leaves it deferred.
        r.abandon(rest.get(1));
        ServiceBusReceivedMessage d3 = r.receiveDeferredMessage(got.get(2).getSequenceNumber());
        assertEquals("d3", d3.getMessageId());
        r.complete(d3);
        assertNull(r.peekMessage(0), "all settled");
        // A sequence number that is not deferred (any more): sbemu answers 404 message-not-found,
        // which this SDK turns into "nothing" (ManagementChannel.sendWithVerify).
        List<ServiceBusReceivedMessage> none = new ArrayList<>();
        r.receiveDeferredMessageBatch(List.of(got.get(0).getSequenceNumber())).forEach(none::add);
        assertEquals(List.of(), ids(none));
    }

    @Test
    void deadLetterWithReasonAndTheDeadLetterSubqueue() {
        send("dlq", "x1", "x2");
        ServiceBusReceiverClient r = peekLock("dlq");
        List<ServiceBusReceivedMessage> got = Util.receiveExact(r, 2);
        r.deadLetter(got.get(0), new DeadLetterOptions().setDeadLetterReason("bad-input")
            .setDeadLetterErrorDescription("field x is missing").setPropertiesToModify(Map.of("checked-by", "test")));
        r.deadLetter(got.get(1));
        assertNull(r.peekMessage(), "the queue itself is empty");

        ServiceBusReceiverClient dl = EMU.track(EMU.client().receiver().queueName("dlq")
            .subQueue(SubQueue.DEAD_LETTER_QUEUE).receiveMode(ServiceBusReceiveMode.PEEK_LOCK)
            .disableAutoComplete().buildClient());
        assertEquals("dlq/$deadletterqueue", dl.getEntityPath());
        List<ServiceBusReceivedMessage> dead = Util.receiveExact(dl, 2);
        assertEquals(List.of("x1", "x2"), ids(dead));
        ServiceBusReceivedMessage x1 = dead.get(0);
        assertEquals("bad-input", x1.getDeadLetterReason());
        assertEquals("field x is missing", x1.getDeadLetterErrorDescription());
        assertEquals("test", x1.getApplicationProperties().get("checked-by"));
        assertEquals("body of x1", x1.getBody().toString());
        assertEquals(got.get(0).getSequenceNumber(), x1.getSequenceNumber(), "same sequence number in the DLQ");
        assertNull(dead.get(1).getDeadLetterReason(), "no reason given, none stored");
        dl.complete(x1);
        dl.abandon(dead.get(1));
        List<ServiceBusReceivedMessage> left = new ArrayList<>();
        dl.peekMessages(5, 0).forEach(left::add);
        assertEquals(List.of("x2"), ids(left));
    }

    @Test
    void maxDeliveryCountDeadLetters() {
        send("maxdc", "m1");
        ServiceBusReceiverClient r = peekLock("maxdc");
        for (int i = 0; i < 2; i++) {
            ServiceBusReceivedMessage m = Util.receiveExact(r, 1).get(0);
            assertEquals(i, m.getDeliveryCount());
            r.abandon(m);
        }
        assertEquals(List.of(), Util.receiveAll(r, 1, Duration.ofSeconds(1)), "gone from the queue");
        ServiceBusReceiverClient dl = EMU.track(EMU.client().receiver().queueName("maxdc")
            .subQueue(SubQueue.DEAD_LETTER_QUEUE).receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient());
        ServiceBusReceivedMessage d = Util.receiveExact(dl, 1).get(0);
        assertEquals("m1", d.getMessageId());
        assertEquals("MaxDeliveryCountExceeded", d.getDeadLetterReason());
        assertNotNull(d.getDeadLetterErrorDescription());
    }

    @Test
    void renewLockKeepsTheMessage() throws Exception {
        send("renew", "r1");
        ServiceBusReceiverClient r = peekLock("renew");
        ServiceBusReceivedMessage m = Util.receiveExact(r, 1).get(0);
        OffsetDateTime first = m.getLockedUntil();
        Thread.sleep(2000); // so the renewed lock ends visibly later than the first one
        OffsetDateTime renewed = r.renewMessageLock(m);
        assertTrue(renewed.isAfter(first.plusSeconds(1)), first + " -> " + renewed);
        // Past the first lock's end, the renewed lock still holds: complete works. (Locks are in
        // the emulator's time, which another test of this class may have moved ahead.)
        Duration offset = Util.clockOffset(EMU.emu());
        Emulator.waitFor("the first lock's end", Duration.ofSeconds(10),
            () -> OffsetDateTime.now().plus(offset).isAfter(first.plusNanos(300_000_000)));
        r.complete(m);
        assertNull(r.peekMessage(), "completed");
    }

    @Test
    void lockLostAfterLockDuration() throws Exception {
        send("lost", "l1");
        ServiceBusReceiverClient r = peekLock("lost");
        ServiceBusReceivedMessage m = Util.receiveExact(r, 1).get(0);
        OffsetDateTime until = m.getLockedUntil();
        assertTrue(until.isBefore(OffsetDateTime.now().plus(Util.clockOffset(EMU.emu())).plusSeconds(6)),
            "LockDuration PT5S: " + until);
        // The lock lapses on the server when the namespace clock passes it (no 5 s wait); the
        // message goes back with DeliveryCount 1.
        Util.advanceClock(EMU.emu(), "PT6S");
        Util.expectReason(ServiceBusFailureReason.MESSAGE_LOCK_LOST, () -> r.complete(m));
        Util.expectReason(ServiceBusFailureReason.MESSAGE_LOCK_LOST, () -> r.renewMessageLock(m));
        ServiceBusReceivedMessage again = Util.receiveExact(r, 1).get(0);
        assertEquals("l1", again.getMessageId());
        assertEquals(1, again.getDeliveryCount());
        r.complete(again);
    }

    @Test
    void peekFromASequenceNumber() {
        send("peek", "p0", "p1", "p2", "p3", "p4");
        ServiceBusReceiverClient r = peekLock("peek");
        ServiceBusReceivedMessage p0 = r.peekMessage();
        assertEquals("p0", p0.getMessageId());
        assertEquals(ServiceBusMessageState.ACTIVE, p0.getState());
        assertNull(p0.getLockToken(), "a peeked message has no lock");
        assertEquals("p1", r.peekMessage().getMessageId(), "peek goes on from the last one");
        long s2 = p0.getSequenceNumber() + 2;
        assertEquals(List.of("p2", "p3", "p4"), ids(r.peekMessages(10, s2)));
        assertEquals("p3", r.peekMessage(s2 + 1).getMessageId());
        assertEquals(List.of("p0", "p1"), ids(r.peekMessages(2, p0.getSequenceNumber())));
        assertNull(r.peekMessage(s2 + 100), "nothing from past the end");
        // Peeking takes nothing: all five are still there to receive.
        assertEquals(List.of("p0", "p1", "p2", "p3", "p4"), ids(Util.receiveExact(r, 5)));
    }

    @Test
    void processorReceivesAndCompletes() throws Exception {
        List<String> sent = IntStream.range(0, 20).mapToObj(i -> "proc-" + i).toList();
        send("proc", sent.toArray(new String[0]));
        List<String> seen = new CopyOnWriteArrayList<>();
        Map<String, Long> counts = new ConcurrentHashMap<>();
        List<ServiceBusErrorContext> errors = new CopyOnWriteArrayList<>();
        ServiceBusProcessorClient p = EMU.client().processor().queueName("proc").maxConcurrentCalls(2)
            .processMessage(ctx -> {
                String id = ctx.getMessage().getMessageId();
                // Every third message is abandoned once: it must come back with DeliveryCount 1.
                if (Integer.parseInt(id.substring(5)) % 3 == 0 && ctx.getMessage().getDeliveryCount() == 0) {
                    ctx.abandon();
                    return;
                }
                counts.merge(id, 1L, Long::sum);
                seen.add(id);
            })
            .processError(errors::add)
            .buildProcessorClient();
        try {
            p.start();
            assertTrue(p.isRunning());
            Emulator.waitFor("the processor to see all 20", Duration.ofSeconds(30), () -> seen.size() >= 20);
            // Auto-complete runs after processMessage returns: wait for the queue to empty.
            try (ServiceBusReceiverClient r = EMU.client().receiver().queueName("proc").buildClient()) {
                Emulator.waitFor("the processor to complete all 20", Duration.ofSeconds(15),
                    () -> r.peekMessage(0) == null);
            }
        } finally {
            p.close();
        }
        List<String> sorted = new ArrayList<>(seen);
        Collections.sort(sorted);
        List<String> want = new ArrayList<>(sent);
        Collections.sort(want);
        assertEquals(want, sorted, "each once");
        assertEquals(List.of(), errors.stream().map(e -> e.getException().toString()).toList());
        assertFalse(p.isRunning());
    }
}
