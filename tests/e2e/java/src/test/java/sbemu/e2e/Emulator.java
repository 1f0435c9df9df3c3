package sbemu.e2e;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One real sbemu process: a temp data dir (its embedded PostgreSQL lives there), free ports for
 * AMQP and HTTP (TLS off unless asked for), a Config.json naming the entities a test class needs,
 * start-up awaited on GET /health = 200, and a stop by SIGTERM that must end in exit 0 within
 * 15 s. stdout and stderr go to {@code <tmp>/sbemu.log}, printed when a test fails.
 *
 * <p>Environment: SBEMU_BIN (default {@code <repo>/build/bin/sbemu}), SBEMU_E2E_KEEP=1 keeps
 * the temp dirs, SBEMU_E2E_ARGS adds flags to every emulator (e.g. "--log-level debug").
 */
public final class Emulator {
    public static final String SAS_KEY_NAME = "RootManageSharedAccessKey";
    public static final String SAS_KEY = "SAS_KEY_VALUE";
    static final Duration HEALTH_TIMEOUT = Duration.ofSeconds(30);
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);

    private final String name;
    private final String configJson;
    private final List<String> extraArgs;
    private final int amqpsPortWanted; // 0 = TLS off, -1 = a free port, else that port
    private final Path tmp;
    private final Path dataDir;
    private final Path logPath;
    private Process proc;
    private int amqpPort;
    private int httpPort;
    private int amqpsPort;
    private boolean failed;

    Emulator(String name, String configJson, List<String> extraArgs, int amqpsPortWanted) throws IOException {
        this.name = name;
        this.configJson = configJson;
        this.extraArgs = List.copyOf(extraArgs);
        this.amqpsPortWanted = amqpsPortWanted;
        // Kept short: psql reaches the cluster through <tmp>/data/pg/run/.s.PGSQL.5432, and a Unix
        // socket path has at most 107 bytes.
        String slug = name.replaceAll("[^A-Za-z0-9]+", "-");
        this.tmp = Files.createTempDirectory("sbemu-java-" + slug.substring(0, Math.min(20, slug.length())) + "-");
        // The embedded cluster runs as the postgres user, which must be able to reach <data-dir>/pg.
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        this.dataDir = tmp.resolve("data");
        this.logPath = tmp.resolve("sbemu.log");
    }

    public static Path repo() {
        String p = System.getProperty("sbemu.repo");
        return (p != null ? Path.of(p) : Path.of("../../..")).toAbsolutePath().normalize();
    }

    static Path binary() {
        String bin = System.getenv("SBEMU_BIN");
        return bin != null && !bin.isEmpty() ? Path.of(bin) : repo().resolve("build/bin/sbemu");
    }

    /** A TCP port that was free a moment ago. */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    public void start() throws Exception {
        Path bin = binary();
        if (!Files.isExecutable(bin)) {
            throw new IllegalStateException("sbemu binary not found at " + bin + " (build it: scripts/build.sh)");
        }
        Path config = tmp.resolve("Config.json");
        Files.writeString(config, configJson);
        if (amqpPort == 0) { // ports are kept across restarts of the same Emulator
            amqpPort = freePort();
            httpPort = freePort();
            amqpsPort = amqpsPortWanted == -1 ? freePort() : amqpsPortWanted;
        }
        List<String> cmd = new ArrayList<>(List.of(bin.toString(),
            "--config", config.toString(),
            "--data-dir", dataDir.toString(),
            "--amqp-port", String.valueOf(amqpPort),
            "--amqps-port", String.valueOf(amqpsPort),
            "--http-port", String.valueOf(httpPort)));
        cmd.addAll(extraArgs);
        String more = System.getenv("SBEMU_E2E_ARGS");
        if (more != null && !more.isBlank()) {
            cmd.addAll(List.of(more.trim().split("\\s+")));
        }
        Files.writeString(logPath, "\n=== " + Instant.now() + " " + String.join(" ", cmd) + "\n",
            StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        ProcessBuilder pb = new ProcessBuilder(cmd)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(logPath.toFile()))
            .redirectErrorStream(true);
        // The tests' own SBEMU_* settings must not leak into the server's flags.
        pb.environment().keySet().removeIf(k -> k.startsWith("SBEMU_"));
        proc = pb.start();
        waitHealthy();
    }

    private void waitHealthy() throws Exception {
        Instant deadline = Instant.now().plus(HEALTH_TIMEOUT);
        String last = "";
        while (Instant.now().isBefore(deadline)) {
            if (!proc.isAlive()) {
                fail("sbemu exited during start-up (code " + proc.exitValue() + ")");
            }
            int[] status = new int[1];
            String body = httpGet("/health", status);
            if (status[0] == 200) {
                if (!body.contains("\"healthy\"")) {
                    fail("/health answered 200 with " + body);
                }
                return;
            }
            last = status[0] + " " + body;
            Thread.sleep(100);
        }
        fail("sbemu not healthy after " + HEALTH_TIMEOUT.toSeconds() + " s (last /health: " + last + ")");
    }

    /** GET on the HTTP port; status[0] gets the status (0 when nothing answered). */
    public String httpGet(String path, int[] status) {
        try {
            HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + httpPort + path).toURL()
                .openConnection();
            c.setConnectTimeout(1000);
            c.setReadTimeout(HTTP_READ_TIMEOUT_MS);
            status[0] = c.getResponseCode();
            try (var in = status[0] < 400 ? c.getInputStream() : c.getErrorStream()) {
                return in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            status[0] = 0;
            return e.toString();
        }
    }

    /**
     * How long an answer on the HTTP port may take. Generous on purpose: the tests check what the
     * answer says, not how fast it came, and a loaded 2-core machine (three e2e runs beside
     * stress-ng --cpu 2) answered a clock GET after 2 s and a clock advance (a PostgreSQL commit)
     * after more than 5 s. A hang still fails, only later.
     */
    static final int HTTP_READ_TIMEOUT_MS = 30000;

    /** POST on the HTTP port (e.g. the clock), returns "status body". */
    public String httpPost(String path) throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + httpPort + path).toURL()
            .openConnection();
        c.setRequestMethod("POST");
        // No body and so no Content-Length, as a plain HttpURLConnection POST goes.
        c.setConnectTimeout(1000);
        c.setReadTimeout(HTTP_READ_TIMEOUT_MS);
        int st = c.getResponseCode();
        try (var in = st < 400 ? c.getInputStream() : c.getErrorStream()) {
            return st + " " + (in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    public int healthStatus() {
        int[] st = new int[1];
        httpGet("/health", st);
        return st[0];
    }

    /** The emulator connection string, with only the AMQP port added. */
    public String connectionString() {
        return connectionString(SAS_KEY_NAME, SAS_KEY);
    }

    public String connectionString(String keyName, String key) {
        return "Endpoint=sb://localhost:" + amqpPort + ";SharedAccessKeyName=" + keyName + ";SharedAccessKey="
            + key + ";UseDevelopmentEmulator=true;";
    }

    public int amqpPort() {
        return amqpPort;
    }

    public int httpPort() {
        return httpPort;
    }

    public int amqpsPort() {
        return amqpsPort;
    }

    public Path dataDir() {
        return dataDir;
    }

    public Path certPath() {
        return dataDir.resolve("tls").resolve("cert.pem");
    }

    public Path tmp() {
        return tmp;
    }

    public String name() {
        return name;
    }

    public boolean isRunning() {
        return proc != null && proc.isAlive();
    }

    public String log() {
        try {
            return Files.readString(logPath, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /** Prints the tail of the emulator's log to stderr. */
    public void dumpLog(String reason) {
        String[] lines = log().split("\n", -1);
        int from = Math.max(0, lines.length - 200);
        StringBuilder sb = new StringBuilder();
        sb.append("\n----- sbemu log (").append(logPath).append(", last ").append(lines.length - from).append(" of ")
            .append(lines.length).append(" lines)").append(reason.isEmpty() ? "" : " after: " + reason).append(" -----\n");
        for (int i = from; i < lines.length; i++) {
            sb.append(lines[i]).append('\n');
        }
        sb.append("----- end of sbemu log -----\n");
        System.err.print(sb);
    }

    void markFailed() {
        failed = true;
    }

    private void fail(String message) {
        failed = true;
        dumpLog(message);
        throw new IllegalStateException(message);
    }

    /** SIGTERM, then a clean exit 0 within 15 s is expected. */
    public void stop() throws InterruptedException {
        if (proc == null) {
            return;
        }
        Process p = proc;
        proc = null;
        if (!p.isAlive()) {
            fail("sbemu had already exited before stop() (code " + p.exitValue() + ")");
        }
        p.destroy(); // SIGTERM
        if (!p.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly().waitFor();
            fail("sbemu did not exit within " + STOP_TIMEOUT.toSeconds() + " s of SIGTERM");
        }
        if (p.exitValue() != 0) {
            fail("sbemu exited with code " + p.exitValue() + " after SIGTERM (expected 0)");
        }
    }

    /** Pid of the embedded postmaster (from <data-dir>/pg/data/postmaster.pid), or -1. */
    public long postmasterPid() {
        try {
            String first = Files.readAllLines(dataDir.resolve("pg/data/postmaster.pid")).get(0).trim();
            return Long.parseLong(first);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /** Sends a signal to a process this suite started (the emulator's own postmaster). */
    static void signal(long pid, String sig) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + sig, String.valueOf(pid)).inheritIO().start().waitFor();
    }

    /**
     * Stops whatever is left (the emulator with SIGKILL, its postmaster with SIGQUIT) and removes
     * the temp dir unless something failed or SBEMU_E2E_KEEP is set.
     */
    public void cleanup() throws Exception {
        if (proc != null) {
            proc.destroyForcibly().waitFor();
            proc = null;
        }
        long pid = postmasterPid();
        if (pid > 0 && alive(pid)) {
            signal(pid, "QUIT");
            for (int i = 0; i < 100 && alive(pid); i++) {
                Thread.sleep(50);
            }
        }
        String keep = System.getenv("SBEMU_E2E_KEEP");
        if (!failed && (keep == null || keep.isEmpty())) {
            try (Stream<Path> walk = Files.walk(tmp)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        } else {
            System.err.println("sbemu e2e: kept " + tmp);
        }
    }

    /** Waits until cond holds, polling every 50 ms, failing after the deadline with what. */
    public static void waitFor(String what, Duration timeout, java.util.function.BooleanSupplier cond)
        throws InterruptedException {
        Instant deadline = Instant.now().plus(timeout);
        while (!cond.getAsBoolean()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what);
            }
            Thread.sleep(50);
        }
    }

    static Map<String, String> env() {
        return System.getenv();
    }
}
