package sbemu.testcontainers;

import com.github.dockerjava.api.model.Capability;
import org.testcontainers.containers.MSSQLServerContainer;
import org.testcontainers.containers.Network;

/**
 * Testcontainers 1.x's part of the tests in ../java/src/shared/java, which this project and
 * ../java2 both compile: the SQL Server container that ServiceBusEmulatorContainer needs, as the
 * azure module's documentation writes it for 1.x (MSSQLServerContainer&lt;SELF&gt; from
 * org.testcontainers.containers, artifact org.testcontainers:mssqlserver). java2's SqlServer.java
 * writes it for 2.x; these lines are the only code that differs between the two. The tests
 * write the network and the emulator around it, as the documentation does.
 */
final class SqlServer {
    final MSSQLServerContainer<?> mssqlServerContainer;

    SqlServer(Network network) {
        // The docs' code for Testcontainers 1.21.4 ("Starting a SQL Server container as dependency").
        mssqlServerContainer = new MSSQLServerContainer<>(
            "mcr.microsoft.com/mssql/server:2022-CU14-ubuntu-22.04"
        )
            .acceptLicense()
            .withPassword("yourStrong(!)Password")
            .withCreateContainerCmdModifier(cmd -> {
                cmd.getHostConfig().withCapAdd(Capability.SYS_PTRACE);
            })
            .withNetwork(network);
    }
}
