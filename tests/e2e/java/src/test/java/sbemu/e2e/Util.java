package sbemu.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusReceivedMessage;
import com.azure.messaging.servicebus.ServiceBusReceiverClient;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** Small helpers shared by the test classes. */
final class Util {
    private Util() {
    }

    /** A fresh id for a test's messages. */
    static String id(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /**
     * Receives until exactly n messages arrived (or the deadline passes, which fails), then makes
     * sure nothing more arrives within a short wait.
     */
    static List<ServiceBusReceivedMessage> receiveExact(ServiceBusReceiverClient r, int n, Duration timeout) {
        List<ServiceBusReceivedMessage> got = new ArrayList<>();
        Instant deadline = Instant.now().plus(timeout);
        while (got.size() < n && Instant.now().isBefore(deadline)) {
            Duration left = Duration.between(Instant.now(), deadline);
            r.receiveMessages(n - got.size(), left.compareTo(Duration.ofSeconds(2)) > 0 ? Duration.ofSeconds(2) : left)
                .forEach(got::add);
        }
        if (got.size() != n) {
            fail("expected " + n + " messages within " + timeout.toMillis() + " ms, got " + got.size() + ": "
                + got.stream().map(ServiceBusReceivedMessage::getMessageId).toList());
        }
        return got;
    }

    static List<ServiceBusReceivedMessage> receiveExact(ServiceBusReceiverClient r, int n) {
        return receiveExact(r, n, Duration.ofSeconds(15));
    }

    /** Everything that arrives within wait (used to prove a queue holds nothing more). */
    static List<ServiceBusReceivedMessage> receiveAll(ServiceBusReceiverClient r, int max, Duration wait) {
        List<ServiceBusReceivedMessage> got = new ArrayList<>();
        r.receiveMessages(max, wait).forEach(got::add);
        return got;
    }

    /** Runs call, which must throw a ServiceBusException with the given reason; returns it. */
    static ServiceBusException expectReason(ServiceBusFailureReason reason, Runnable call) {
        try {
            call.run();
        } catch (ServiceBusException e) {
            assertEquals(reason, e.getReason(), "reason of " + e);
            return e;
        } catch (RuntimeException e) {
            Throwable c = e;
            while (c != null && !(c instanceof ServiceBusException)) {
                c = c.getCause();
            }
            if (c != null) {
                assertEquals(reason, ((ServiceBusException) c).getReason(), "reason of " + e);
                return (ServiceBusException) c;
            }
            throw new AssertionError("expected a ServiceBusException with " + reason + ", got " + e, e);
        }
        fail("expected a ServiceBusException with reason " + reason + ", nothing was thrown");
        return null;
    }

    /**
     * Runs call, which must fail with an AmqpException of the given condition somewhere in the
     * cause chain (the sync receive wraps the link's error in "The receiver client is
     * terminated", and acceptSession surfaces it as is).
     */
    static com.azure.core.amqp.exception.AmqpException expectCondition(
        com.azure.core.amqp.exception.AmqpErrorCondition condition, Runnable call) {
        try {
            call.run();
        } catch (RuntimeException e) {
            for (Throwable c = e; c != null; c = c.getCause()) {
                if (c instanceof com.azure.core.amqp.exception.AmqpException a && a.getErrorCondition() != null) {
                    assertEquals(condition, a.getErrorCondition(), "condition of " + a);
                    return a;
                }
            }
            throw new AssertionError("expected an AmqpException with " + condition + " in " + e, e);
        }
        fail("expected an AmqpException with " + condition + ", nothing was thrown");
        return null;
    }

    /** psql on the emulator's embedded cluster; returns trimmed stdout (unaligned, tuples only). */
    static String psql(Emulator emu, String sql) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("psql", "-h", emu.dataDir().resolve("pg/run").toString(), "-U", "sbemu",
            "-d", "sbemu", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("psql failed: " + out);
        }
        return out;
    }

    /** How far the emulator's clock is ahead of this machine's (GET /$sbemu/clock offsetMs). */
    static Duration clockOffset(Emulator emu) {
        int[] st = new int[1];
        String body = emu.httpGet("/$sbemu/clock", st);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"offsetMs\"\\s*:\\s*(-?\\d+)").matcher(body);
        if (st[0] != 200 || !m.find()) {
            throw new IllegalStateException("GET /$sbemu/clock answered " + st[0] + " " + body);
        }
        return Duration.ofMillis(Long.parseLong(m.group(1)));
    }

    /** Moves the emulator's clock forward (POST /$sbemu/clock/advance?by=ISO-8601). */
    static void advanceClock(Emulator emu, String iso) throws IOException {
        String r = emu.httpPost("/$sbemu/clock/advance?by=" + iso);
        if (!r.startsWith("200")) {
            throw new IOException("clock advance answered " + r);
        }
    }
}
