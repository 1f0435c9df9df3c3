package sbemu.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.ServiceBusTransactionContext;
import com.azure.messaging.servicebus.models.CompleteOptions;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Transactions: sends committed and rolled back, a transaction across two entities on one
 * connection, and send-via (enableCrossEntityTransactions: the first entity a builder's clients
 * touch carries the others' sends, with com.microsoft:transfer-destination-address).
 */
class TransactionTest {
    @RegisterExtension
    static final EmulatorExtension EMU = EmulatorExtension.builder()
        .queue("tx").queue("two-a").queue("two-b").queue("via-in").queue("via-out").queue("via-other")
        .topic("tx-in", EmulatorExtension.Builder.sub("onward", null, "ForwardTo", "tx-out"))
        .topic("tx-out", EmulatorExtension.Builder.sub("end", null))
        .build();

    static List<String> take(String q, int n) {
        try (ServiceBusReceiverClient r = EMU.client().receiver().queueName(q)
            .receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient()) {
            return Util.receiveExact(r, n).stream().map(ServiceBusReceivedMessage::getMessageId).toList();
        }
    }

    static void assertEmpty(String q) {
        try (ServiceBusReceiverClient r = EMU.client().receiver().queueName(q).buildClient()) {
            assertNull(r.peekMessage(0), q + " should hold nothing");
        }
    }

    @Test
    void sendsCommitAndRollBack() {
        ServiceBusSenderClient s = EMU.track(EMU.client().sender().queueName("tx").buildClient());
        ServiceBusTransactionContext tx = s.createTransaction();
        assertNotNull(tx.getTransactionId());
        s.sendMessage(new ServiceBusMessage("1").setMessageId("c-1"), tx);
        s.sendMessages(List.of(new ServiceBusMessage("2").setMessageId("c-2"),
            new ServiceBusMessage("3").setMessageId("c-3")), tx);
        s.scheduleMessage(new ServiceBusMessage("4").setMessageId("c-4"),
            java.time.OffsetDateTime.now().minusSeconds(1), tx);
        assertEmpty("tx"); // nothing is visible before the commit
        s.commitTransaction(tx);
        assertEquals(List.of("c-1", "c-2", "c-3", "c-4"), take("tx", 4));

        ServiceBusTransactionContext rb = s.createTransaction();
        s.sendMessage(new ServiceBusMessage("x").setMessageId("r-1"), rb);
        s.rollbackTransaction(rb);
        s.sendMessage(new ServiceBusMessage("after").setMessageId("after"));
        assertEquals(List.of("after"), take("tx", 1), "the rolled-back send never arrives");
    }

    /**
     * A copy a transaction's publish forwards into another topic rests there until that topic is
     * routed: the commit routes it at once. (It used to wait for the periodic pump, up to 5 s; the
     * bound below leaves room for a loaded machine and is under that.)
     */
    @Test
    void aTransactionsCopyForwardedIntoAnotherTopicArrivesAtOnce() {
        ServiceBusSenderClient s = EMU.track(EMU.client().sender().topicName("tx-in").buildClient());
        ServiceBusReceiverClient r = EMU.track(EMU.client().receiver().topicName("tx-out").subscriptionName("end")
            .receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient());
        r.peekMessage(); // the receiver's link is up before the clock starts
        ServiceBusTransactionContext tx = s.createTransaction();
        s.sendMessage(new ServiceBusMessage("f").setMessageId("fwd-1"), tx);
        long t0 = System.nanoTime();
        s.commitTransaction(tx);
        List<ServiceBusReceivedMessage> got = Util.receiveExact(r, 1);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals("fwd-1", got.get(0).getMessageId());
        System.out.println("  forwarded copy of a committed transaction arrived after " + ms + " ms");
        org.junit.jupiter.api.Assertions.assertTrue(ms < 2500, "arrived after " + ms + " ms: the commit did not route it");
    }

    /** One builder, one connection: a transaction that completes on one queue and sends to another. */
    @Test
    void aTransactionAcrossTwoEntities() throws Exception {
        ServiceBusClientBuilder b = EMU.client();
        ServiceBusSenderClient toA = EMU.track(b.sender().queueName("two-a").buildClient());
        toA.sendMessages(List.of(new ServiceBusMessage("a").setMessageId("a-1"),
            new ServiceBusMessage("a").setMessageId("a-2")));
        ServiceBusReceiverClient fromA = EMU.track(b.receiver().queueName("two-a").disableAutoComplete().buildClient());
        ServiceBusSenderClient toB = EMU.track(b.sender().queueName("two-b").buildClient());
        List<ServiceBusReceivedMessage> got = Util.receiveExact(fromA, 2);

        ServiceBusTransactionContext tx = fromA.createTransaction();
        fromA.complete(got.get(0), new CompleteOptions().setTransactionContext(tx));
        toB.sendMessage(new ServiceBusMessage("b").setMessageId("b-1"), tx);
        fromA.commitTransaction(tx);
        assertEquals(List.of("b-1"), take("two-b", 1));

        ServiceBusTransactionContext rb = fromA.createTransaction();
        fromA.complete(got.get(1), new CompleteOptions().setTransactionContext(rb));
        toB.sendMessage(new ServiceBusMessage("b").setMessageId("b-2"), rb);
        fromA.rollbackTransaction(rb);
        // The rollback left a-2 locked (this SDK counts its delivery settled and will not settle it
        // again) and b-2 unsent. Once the lock lapses (the namespace clock moved past LockDuration
        // PT1M) a-2 comes back.
        Util.advanceClock(EMU.emu(), "PT2M");
        ServiceBusReceivedMessage back = Util.receiveExact(fromA, 1).get(0);
        assertEquals("a-2", back.getMessageId());
        assertEquals(1, back.getDeliveryCount());
        fromA.complete(back);
        assertEmpty("two-a");
        assertEmpty("two-b");
    }

    /** Send-via: receive from via-in, complete it and forward to via-out in one transaction. */
    @Test
    void sendViaCommitAndRollback() throws Exception {
        ServiceBusClientBuilder b = EMU.client().enableCrossEntityTransactions();
        // The first entity touched (via-in, by this receiver) is the via entity of every client.
        ServiceBusReceiverClient in = EMU.track(b.receiver().queueName("via-in").disableAutoComplete().buildClient());
        ServiceBusSenderClient feed = EMU.track(b.sender().queueName("via-in").buildClient());
        ServiceBusSenderClient out = EMU.track(b.sender().queueName("via-out").buildClient());
        ServiceBusSenderClient other = EMU.track(b.sender().queueName("via-other").buildClient());
        feed.sendMessages(List.of(new ServiceBusMessage("work").setMessageId("w-1"),
            new ServiceBusMessage("work").setMessageId("w-2")));
        List<ServiceBusReceivedMessage> got = Util.receiveExact(in, 2);

        ServiceBusTransactionContext tx = in.createTransaction();
        in.complete(got.get(0), new CompleteOptions().setTransactionContext(tx));
        out.sendMessage(new ServiceBusMessage("result").setMessageId("res-1"), tx);
        other.sendMessage(new ServiceBusMessage("audit").setMessageId("audit-1"), tx);
        assertEmpty("via-out"); // not before the commit
        in.commitTransaction(tx);
        // The sends went through via-in's link but landed where they were addressed.
        assertEquals(List.of("res-1"), take("via-out", 1));
        assertEquals(List.of("audit-1"), take("via-other", 1));

        ServiceBusTransactionContext rb = in.createTransaction();
        in.complete(got.get(1), new CompleteOptions().setTransactionContext(rb));
        out.sendMessage(new ServiceBusMessage("result").setMessageId("res-2"), rb);
        in.rollbackTransaction(rb);
        Util.advanceClock(EMU.emu(), "PT2M"); // the rolled-back complete left w-2 locked
        ServiceBusReceivedMessage back = Util.receiveExact(in, 1).get(0);
        assertEquals("w-2", back.getMessageId(), "the rolled-back complete left w-2 in via-in");
        in.complete(back);
        // Nothing stray: via-in kept none of the forwarded messages, via-out got no res-2.
        try (ServiceBusReceiverClient r = EMU.client().receiver().queueName("via-out").buildClient()) {
            assertEquals(List.of(), Util.receiveAll(r, 5, Duration.ofSeconds(1)));
        }
        assertEmpty("via-in");
    }
}
