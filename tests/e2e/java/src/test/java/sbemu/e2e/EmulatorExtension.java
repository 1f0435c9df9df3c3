package sbemu.e2e;

import com.azure.core.amqp.AmqpRetryMode;
import com.azure.core.amqp.AmqpRetryOptions;
import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * A fresh emulator per test class. Register it on a static field:
 *
 * <pre>
 * &#64;RegisterExtension
 * static final EmulatorExtension EMU = EmulatorExtension.builder().queue("q").build();
 * </pre>
 *
 * It starts before the class's first test, prints the emulator's log when a test fails, and at
 * the end closes every client made through it and stops the emulator with SIGTERM, which must
 * end in exit 0 (a failure there fails the class).
 */
public final class EmulatorExtension implements BeforeAllCallback, AfterAllCallback, TestWatcher {
    private final Builder b;
    private Emulator emu;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    private EmulatorExtension(Builder b) {
        this.b = b;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Emulator emu() {
        if (emu == null) {
            throw new IllegalStateException("the emulator did not start (see its log above)");
        }
        return emu;
    }

    public String connectionString() {
        return emu().connectionString();
    }

    /**
     * A client builder on this emulator with short retries (a wrong answer should fail fast,
     * not after the SDK's default 3 tries of 60 s).
     */
    public ServiceBusClientBuilder client() {
        return new ServiceBusClientBuilder().connectionString(connectionString()).retryOptions(retry(1));
    }

    /**
     * Short retries. MaxDelay must be at least Delay + 4 s: this SDK's RetryUtil adds its
     * server-busy wait (4 s) to every delay and gives Reactor that as the minimum backoff, and
     * a maximum below it fails each retry with "bound must be greater than origin".
     */
    public static AmqpRetryOptions retry(int maxRetries) {
        return new AmqpRetryOptions().setMaxRetries(maxRetries).setMode(AmqpRetryMode.FIXED)
            .setDelay(Duration.ofMillis(200)).setMaxDelay(Duration.ofSeconds(5)).setTryTimeout(Duration.ofSeconds(15));
    }

    /** Closes c when the class ends (before the emulator is stopped). */
    public <T extends AutoCloseable> T track(T c) {
        synchronized (closeables) {
            closeables.add(c);
        }
        return c;
    }

    @Override
    public void beforeAll(ExtensionContext ctx) throws Exception {
        emu = new Emulator(ctx.getRequiredTestClass().getSimpleName(), b.configJson(), b.args, b.amqpsPort);
        try {
            emu.start();
        } catch (Exception e) {
            emu.markFailed();
            throw e;
        }
    }

    @Override
    public void afterAll(ExtensionContext ctx) throws Exception {
        if (emu == null) {
            return;
        }
        List<AutoCloseable> cs;
        synchronized (closeables) {
            cs = new ArrayList<>(closeables);
            closeables.clear();
        }
        for (AutoCloseable c : cs) {
            try {
                c.close();
            } catch (Exception ignored) {
                // a client that cannot close cleanly must not hide the emulator's exit status
            }
        }
        try {
            emu.stop();
        } finally {
            emu.cleanup();
        }
    }

    @Override
    public void testFailed(ExtensionContext ctx, Throwable cause) {
        if (emu != null) {
            emu.markFailed();
            emu.dumpLog(ctx.getDisplayName() + ": " + cause);
        }
    }

    /** Entities (as in the official emulator's Config.json), extra flags and TLS port. */
    public static final class Builder {
        private final List<String> queues = new ArrayList<>();
        private final List<String> topics = new ArrayList<>();
        private final List<String> args = new ArrayList<>();
        private int amqpsPort = 0;

        /** A queue; props override the defaults below (e.g. "RequiresSession", true). */
        public Builder queue(String name, Object... props) {
            Map<String, Object> p = queueDefaults();
            putAll(p, props);
            queues.add("{\"Name\":" + json(name) + ",\"Properties\":" + json(p) + "}");
            return this;
        }

        /** A topic with subscriptions made by {@link #sub}. */
        public Builder topic(String name, String... subscriptions) {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("DefaultMessageTimeToLive", "PT1H");
            p.put("DuplicateDetectionHistoryTimeWindow", "PT20S");
            p.put("RequiresDuplicateDetection", false);
            topics.add("{\"Name\":" + json(name) + ",\"Properties\":" + json(p) + ",\"Subscriptions\":["
                + String.join(",", subscriptions) + "]}");
            return this;
        }

        /** A subscription: props override the queue defaults; rules is a JSON array or null. */
        public static String sub(String name, String rulesJson, Object... props) {
            Map<String, Object> p = queueDefaults();
            p.remove("DuplicateDetectionHistoryTimeWindow");
            p.remove("RequiresDuplicateDetection");
            putAll(p, props);
            return "{\"Name\":" + json(name) + ",\"Properties\":" + json(p) + ",\"Rules\":"
                + (rulesJson == null ? "[]" : rulesJson) + "}";
        }

        public Builder args(String... a) {
            args.addAll(List.of(a));
            return this;
        }

        /** 0 = no TLS listener (default), -1 = a free port, else that port. */
        public Builder amqpsPort(int port) {
            amqpsPort = port;
            return this;
        }

        public EmulatorExtension build() {
            return new EmulatorExtension(this);
        }

        String configJson() {
            return "{\"UserConfig\":{\"Namespaces\":[{\"Name\":\"sbemulatorns\",\"Queues\":[" + String.join(",", queues)
                + "],\"Topics\":[" + String.join(",", topics) + "]}],\"Logging\":{\"Type\":\"Console\"}}}";
        }

        private static Map<String, Object> queueDefaults() {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("DeadLetteringOnMessageExpiration", false);
            p.put("DefaultMessageTimeToLive", "PT1H");
            p.put("DuplicateDetectionHistoryTimeWindow", "PT20S");
            p.put("ForwardDeadLetteredMessagesTo", "");
            p.put("ForwardTo", "");
            p.put("LockDuration", "PT1M");
            p.put("MaxDeliveryCount", 10);
            p.put("RequiresDuplicateDetection", false);
            p.put("RequiresSession", false);
            return p;
        }

        private static void putAll(Map<String, Object> p, Object... kv) {
            if (kv.length % 2 != 0) {
                throw new IllegalArgumentException("properties come in name, value pairs");
            }
            for (int i = 0; i < kv.length; i += 2) {
                p.put((String) kv[i], kv[i + 1]);
            }
        }

        static String json(Object v) {
            if (v instanceof String s) {
                return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
            }
            if (v instanceof Map<?, ?> m) {
                List<String> parts = new ArrayList<>();
                m.forEach((k, val) -> parts.add(json(String.valueOf(k)) + ":" + json(val)));
                return "{" + String.join(",", parts) + "}";
            }
            return String.valueOf(v);
        }
    }
}
