package sbemu.testcontainers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.azure.messaging.servicebus.ServiceBusClientBuilder;
import com.azure.messaging.servicebus.ServiceBusException;
import com.azure.messaging.servicebus.ServiceBusFailureReason;
import com.azure.messaging.servicebus.ServiceBusMessage;
import com.azure.messaging.servicebus.ServiceBusSenderClient;
import org.junit.jupiter.api.Test;
import org.testcontainers.azure.ServiceBusEmulatorContainer;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.MountableFile;

/**
 * ServiceBusEmulatorContainer.withConfig, as the module's documentation passes a Config.json (a
 * classpath resource copied to /ServiceBus_Emulator/ConfigFiles/Config.json): the entities it
 * names exist, the image's default ones do not.
 */
@Testcontainers
class ConfigTest {

    static Network network = Network.newNetwork();

    // The documentation's SQL Server container as this project's Testcontainers version writes it
    // (SqlServer.java in java/src/test and java2/src/test: MSSQLServerContainer moved in 2.x).
    static SqlServer sqlServer = new SqlServer(network);

    @Container
    static GenericContainer<?> mssqlServerContainer = sqlServer.mssqlServerContainer;

    @Container
    static ServiceBusEmulatorContainer emulator = new ServiceBusEmulatorContainer(Messaging.sbemuImage())
        .acceptLicense()
        .withConfig(MountableFile.forClasspathResource("/service-bus-config.json"))
        .withNetwork(network)
        .withMsSqlServerContainer(sqlServer.mssqlServerContainer);

    @Test
    void queueFromConfig() {
        Messaging.roundTrip(emulator.getConnectionString(), "java.queue", null);
    }

    @Test
    void topicSubscriptionAndRuleFromConfig() {
        // java.sub keeps what its correlation rule matches: via=java, which roundTrip sets.
        Messaging.roundTrip(emulator.getConnectionString(), "java.topic", "java.sub");
    }

    @Test
    void defaultEntitiesAreNotCreated() {
        try (ServiceBusSenderClient sender = new ServiceBusClientBuilder()
                .connectionString(emulator.getConnectionString())
                .sender()
                .queueName("queue.1")
                .buildClient()) {
            ServiceBusException e = assertThrows(ServiceBusException.class, () -> sender.sendMessage(new ServiceBusMessage("x")));
            assertEquals(ServiceBusFailureReason.MESSAGING_ENTITY_NOT_FOUND, e.getReason(), String.valueOf(e));
        }
    }
}
