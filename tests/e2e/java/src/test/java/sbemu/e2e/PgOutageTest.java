package sbemu.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.core.amqp.AmqpRetryMode;
import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.core.amqp.exception.AmqpErrorCondition;
import com.azure.core.amqp.exception.AmqpException;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import com.azure.messaging.servicebus.models.ServiceBusReceiveMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Server busy: PostgreSQL is taken away under the SDK (as tests/e2e/js/pg_outage.test.js does:
 * the embedded cluster's data dir is moved aside so it cannot come back, then its postmaster is
 * killed). sbemu answers sends com.microsoft:server-busy, which this SDK takes as transient and
 * retries; a send started during the outage gets through once the data dir is
 * back and sbemu has restarted the cluster, and nothing acknowledged before is lost.
 */
class PgOutageTest {
    @RegisterExtension
    static final EmulatorExtension EMU = EmulatorExtension.builder().queue("outage").build();

    static void waitHealth(int status, Duration timeout) throws InterruptedException {
        Emulator.waitFor("/health " + status, timeout, () -> EMU.emu().healthStatus() == status);
    }

    @Test
    void serverBusyWhileThePostgresIsAwayThenTheRetriedSendGetsThrough() throws Exception {
        try (ServiceBusSenderClient s = EMU.client().sender().queueName("outage").buildClient()) {
            s.sendMessages(IntStream.range(0, 10).mapToObj(i -> new ServiceBusMessage("b").setMessageId("before-" + i))
                .toList());
        }
        Path data = EMU.emu().dataDir().resolve("pg/data");
        Path away = EMU.emu().dataDir().resolve("pg/data.away");
        long pid = EMU.emu().postmasterPid();
        assertTrue(pid > 0, "a postmaster.pid");
        Files.move(data, away);
        CompletableFuture<Void> sent;
        try {
            Emulator.signal(pid, "KILL");
            Emulator.waitFor("the postmaster to die", Duration.ofSeconds(5), () -> !Emulator.alive(pid));
            waitHealth(503, Duration.ofSeconds(15));

            // No retries: the refusal itself, as the SDK maps it.
            try (ServiceBusSenderClient once = EMU.client().retryOptions(EmulatorExtension.retry(0)).sender()
                .queueName("outage").buildClient()) {
                // The SDK's retry wrapper says "Retries exhausted: 0/0" (GENERAL_ERROR); the cause is
                // the rejected delivery's AmqpException, com.microsoft:server-busy, transient.
                AmqpException e = Util.expectCondition(AmqpErrorCondition.SERVER_BUSY_ERROR,
                    () -> once.sendMessage(new ServiceBusMessage("x").setMessageId("during-no-retry")));
                assertTrue(e.isTransient(), "server-busy is transient");
                assertTrue(e.getMessage().toLowerCase().contains("database"), "says what is away: " + e.getMessage());
            }

            // With retries: started during the outage, done once PostgreSQL is back.
            AmqpRetryOptions patient = new AmqpRetryOptions().setMode(AmqpRetryMode.FIXED).setMaxRetries(30)
                .setDelay(Duration.ofMillis(500)).setMaxDelay(Duration.ofSeconds(5)) // >= delay + 4 s, see retry()
                .setTryTimeout(Duration.ofSeconds(5));
            ServiceBusSenderClient retrying = EMU.track(EMU.client().retryOptions(patient).sender()
                .queueName("outage").buildClient());
            sent = CompletableFuture.runAsync(
                () -> retrying.sendMessage(new ServiceBusMessage("r").setMessageId("retried")));
            Thread.sleep(1500); // a few tries fail with server-busy first
            assertFalse(sent.isDone(), "the send cannot have succeeded while PostgreSQL is away");
        } finally {
            Files.move(away, data);
        }
        waitHealth(200, Duration.ofSeconds(40));
        long newPid = EMU.emu().postmasterPid();
        assertNotEquals(pid, newPid, "sbemu started a new postmaster");
        assertTrue(EMU.emu().log().contains("PostgreSQL is back"), "the log says so");

        // The retried send (in this test's other thread) completes, without an error.
        sent.get(60, TimeUnit.SECONDS);
        try (ServiceBusReceiverClient r = EMU.client().receiver().queueName("outage")
            .receiveMode(ServiceBusReceiveMode.RECEIVE_AND_DELETE).buildClient()) {
            List<String> ids = new ArrayList<>();
            Util.receiveExact(r, 11, Duration.ofSeconds(30)).forEach(m -> ids.add(m.getMessageId()));
            List<String> want = new ArrayList<>(IntStream.range(0, 10).mapToObj(i -> "before-" + i).toList());
            want.add("retried");
            assertEquals(want, ids, "everything acknowledged before, and the retried send, once each");
        }
    }
}
