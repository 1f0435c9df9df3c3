package sbemu.testcontainers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusErrorContext;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusProcessorClient;
import com.azure.messaging.servicebus.ServiceBusReceivedMessageContext;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.testcontainers.azure.ServiceBusEmulatorContainer;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * ServiceBusEmulatorContainer as the azure module's documentation sets it up (network, SQL Server
 * container, emulator), with sbemu's image in place of Microsoft's and no Config.json: the
 * module's wait (the "Emulator Service is Successfully Up!" line) passes, and the image's default
 * entities carry messages.
 */
@Testcontainers
class DefaultEntitiesTest {

    static Network network = Network.newNetwork();

    // The documentation's SQL Server container as this project's Testcontainers version writes it
    // (SqlServer.java in java/src/test and java2/src/test: MSSQLServerContainer moved in 2.x).
    static SqlServer sqlServer = new SqlServer(network);

    @Container
    static GenericContainer<?> mssqlServerContainer = sqlServer.mssqlServerContainer;

    @Container
    static ServiceBusEmulatorContainer emulator = new ServiceBusEmulatorContainer(Messaging.sbemuImage())
        .acceptLicense()
        .withNetwork(network)
        .withMsSqlServerContainer(sqlServer.mssqlServerContainer);

    @Test
    void connectionStringIsTheEmulatorsOnTheMappedPort() {
        assertEquals(
            "Endpoint=sb://" + emulator.getHost() + ":" + emulator.getMappedPort(5672) +
            ";SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;",
            emulator.getConnectionString()
        );
        // The module told the emulator where its SQL Server is, as it would tell Microsoft's.
        assertEquals(mssqlServerContainer.getNetworkAliases().get(0), emulator.getEnvMap().get("SQL_SERVER"));
        assertEquals("Y", emulator.getEnvMap().get("ACCEPT_EULA"));
    }

    /** The module's documented client code: a sender client, then a processor client. */
    @Test
    void senderAndProcessorOnQueue1() throws InterruptedException {
        ServiceBusSenderClient senderClient = new ServiceBusClientBuilder()
            .connectionString(emulator.getConnectionString())
            .sender()
            .queueName("queue.1")
            .buildClient();
        senderClient.sendMessage(new ServiceBusMessage("Hello, Testcontainers!"));
        senderClient.close();

        final List<String> received = new CopyOnWriteArrayList<>();
        final List<String> errors = new CopyOnWriteArrayList<>();
        final CountDownLatch one = new CountDownLatch(1);
        Consumer<ServiceBusReceivedMessageContext> messageConsumer = m -> {
            received.add(m.getMessage().getBody().toString());
            m.complete();
            one.countDown();
        };
        Consumer<ServiceBusErrorContext> errorConsumer = e -> errors.add(String.valueOf(e.getException()));
        ServiceBusProcessorClient processorClient = new ServiceBusClientBuilder()
            .connectionString(emulator.getConnectionString())
            .processor()
            .queueName("queue.1")
            .processMessage(messageConsumer)
            .processError(errorConsumer)
            .buildProcessorClient();
        processorClient.start();
        try {
            assertTrue(one.await(20, TimeUnit.SECONDS), "the processor got the message; errors: " + errors);
        } finally {
            processorClient.close();
        }
        assertEquals(List.of("Hello, Testcontainers!"), received);
        assertEquals(List.of(), errors);
    }

    @Test
    void defaultTopicSubscription() {
        // subscription.3 of the image's topic.1 has the default rule (everything).
        Messaging.roundTrip(emulator.getConnectionString(), "topic.1", "subscription.3");
    }
}
