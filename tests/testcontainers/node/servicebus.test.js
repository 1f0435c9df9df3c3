// @testcontainers/azureservicebus started with sbemu's image where its docs
// give Microsoft's (mcr.microsoft.com/azure-messaging/servicebus-emulator), as
// README.md promises: the module starts its SQL Server container and then the
// emulator, its own wait strategy (GET /health = 200 on 5300) passes, and the
// connection string it hands out carries a message both ways with
// @azure/service-bus 7.9.5. Run by ../run.sh, which gives the module a Docker
// API (podman's service, DOCKER_HOST) and the local images.
"use strict";

const { test } = require("node:test");
const assert = require("node:assert/strict");
const { GenericContainer, Wait } = require("testcontainers");
const { AzureServiceBusContainer } = require("@testcontainers/azureservicebus");
const { ServiceBusClient } = require("@azure/service-bus");

const IMAGE = process.env.SBEMU_IMAGE || "sbemu:latest";

// Sends one message on `queue` through the connection string and receives it
// back (peek-lock, then completed), within a bounded wait.
async function roundTrip(connectionString, queue) {
  const client = new ServiceBusClient(connectionString);
  try {
    const body = `hello from testcontainers-node ${Date.now()}`;
    await client.createSender(queue).sendMessages({ body, applicationProperties: { via: "node" } });
    const receiver = client.createReceiver(queue);
    const got = await receiver.receiveMessages(1, { maxWaitTimeInMs: 15_000 });
    assert.equal(got.length, 1, `one message received from ${queue}`);
    assert.equal(got[0].body, body);
    assert.equal(got[0].applicationProperties.via, "node");
    await receiver.completeMessage(got[0]);
    const rest = await receiver.receiveMessages(1, { maxWaitTimeInMs: 1_000 });
    assert.equal(rest.length, 0, "the completed message is gone");
  } finally {
    await client.close();
  }
}

function assertConnectionString(container) {
  const cs = container.getConnectionString();
  assert.equal(
    cs,
    `Endpoint=sb://${container.getHost()}:${container.getMappedPort(5672)};SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;`,
  );
  return cs;
}

test("README line: new AzureServiceBusContainer('sbemu:latest').acceptLicense().start(), default entities", async () => {
  const serviceBus = await new AzureServiceBusContainer(IMAGE).acceptLicense().start();
  try {
    // The module started its SQL Server container on the network it made for both
    // (podman 4 also leaves the SQL Server container on its default network).
    const networks = serviceBus.getNetworkNames();
    assert.equal(networks.length, 1, `the emulator is on one network: ${networks}`);
    assert.ok(serviceBus.getMssqlContainer().getNetworkNames().includes(networks[0]));
    const cs = assertConnectionString(serviceBus);
    // Without a Config.json the image's default entities exist: queue.1, topic.1/subscription.1..4.
    await roundTrip(cs, "queue.1");
    const client = new ServiceBusClient(cs);
    try {
      await client.createSender("topic.1").sendMessages({ body: "to the topic" });
      const receiver = client.createReceiver("topic.1", "subscription.3");
      const got = await receiver.receiveMessages(1, { maxWaitTimeInMs: 15_000 });
      assert.equal(got.length, 1);
      assert.equal(got[0].body, "to the topic");
      await receiver.completeMessage(got[0]);
    } finally {
      await client.close();
    }
  } finally {
    await serviceBus.stop();
  }
});

test("withConfig(Config.json): the entities it names, and no default ones", async () => {
  const queueName = "custom-queue";
  const config = JSON.stringify({
    UserConfig: {
      Namespaces: [
        {
          Name: "sbemulatorns",
          Queues: [
            {
              Name: queueName,
              Properties: {
                DeadLetteringOnMessageExpiration: false,
                DefaultMessageTimeToLive: "PT1H",
                DuplicateDetectionHistoryTimeWindow: "PT20S",
                ForwardDeadLetteredMessagesTo: "",
                ForwardTo: "",
                LockDuration: "PT1M",
                MaxDeliveryCount: 3,
                RequiresDuplicateDetection: false,
                RequiresSession: false,
              },
            },
          ],
          Topics: [],
        },
      ],
      Logging: { Type: "File" },
    },
  });
  const serviceBus = await new AzureServiceBusContainer(IMAGE).acceptLicense().withConfig(config).start();
  try {
    const cs = assertConnectionString(serviceBus);
    await roundTrip(cs, queueName);
    // The file replaced the defaults: queue.1 was not created.
    const client = new ServiceBusClient(cs);
    try {
      await assert.rejects(client.createSender("queue.1").sendMessages({ body: "x" }), (err) => {
        assert.equal(err.code, "MessagingEntityNotFound", String(err));
        return true;
      });
    } finally {
      await client.close();
    }
  } finally {
    await serviceBus.stop();
  }
});

test("withMssqlContainer + withMssqlPassword: a SQL Server container of the user's", async () => {
  const customPassword = "MyC0mplexP@ssw0rd!";
  const mssqlContainer = new GenericContainer("mcr.microsoft.com/mssql/server:2022-latest")
    .withEnvironment({ ACCEPT_EULA: "Y", MSSQL_SA_PASSWORD: customPassword })
    .withWaitStrategy(Wait.forLogMessage(/.*Recovery is complete.*/, 1).withStartupTimeout(120_000));
  const serviceBus = await new AzureServiceBusContainer(IMAGE)
    .acceptLicense()
    .withMssqlContainer(mssqlContainer)
    .withMssqlPassword(customPassword)
    .start();
  try {
    await roundTrip(assertConnectionString(serviceBus), "queue.1");
  } finally {
    await serviceBus.stop();
  }
});
