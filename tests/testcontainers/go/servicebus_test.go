// Testcontainers for Go's Service Bus module
// (github.com/testcontainers/testcontainers-go/modules/azure/servicebus) run
// with sbemu's image where its docs give Microsoft's
// (mcr.microsoft.com/azure-messaging/servicebus-emulator), as README.md
// promises: servicebus.Run starts its SQL Server container, then the
// emulator; the module's own wait strategy (5672 and 5300 listening, from the
// host and inside the container, and GET /health = 200) passes; and the
// connection string it hands out carries messages both ways with azservicebus.
// Run by ../run.sh, which gives the module a Docker API (podman's service,
// DOCKER_HOST) and the local images.
package tc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/azure/servicebus"
	"github.com/testcontainers/testcontainers-go/modules/mssql"
)

func image() string {
	if img := os.Getenv("SBEMU_IMAGE"); img != "" {
		return img
	}
	return "sbemu:latest"
}

// terminate stops the emulator, its SQL Server container and their network,
// printing the emulator's log first when the test failed.
func terminate(t *testing.T, ctr *servicebus.Container) {
	t.Helper()
	if t.Failed() && ctr != nil && ctr.Container != nil {
		if rc, err := ctr.Logs(context.Background()); err == nil {
			b, _ := io.ReadAll(io.LimitReader(rc, 64<<10))
			rc.Close()
			t.Logf("emulator log:\n%s", b)
		}
	}
	if err := testcontainers.TerminateContainer(ctr); err != nil {
		t.Errorf("terminate: %v", err)
	}
}

// checkConnectionString: the module's string is the emulator's, with the
// host and the port mapped to 5672.
func checkConnectionString(t *testing.T, ctx context.Context, ctr *servicebus.Container) string {
	t.Helper()
	cs, err := ctr.ConnectionString(ctx)
	if err != nil {
		t.Fatalf("ConnectionString: %v", err)
	}
	host, err := ctr.Host(ctx)
	if err != nil {
		t.Fatal(err)
	}
	port, err := ctr.MappedPort(ctx, "5672/tcp")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Endpoint=sb://%s:%s;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;", host, port.Port())
	if cs != want {
		t.Fatalf("connection string %q, want %q", cs, want)
	}
	return cs
}

// roundTrip sends one message (with content type `contentType`, if any) to
// `entity` and receives it back from `entity` (a queue) or from subscription
// `sub` of topic `entity`, peek-lock then complete, within bounded waits.
func roundTrip(t *testing.T, ctx context.Context, cs, entity, sub, contentType string) {
	t.Helper()
	client, err := azservicebus.NewClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	defer client.Close(ctx)
	sender, err := client.NewSender(entity, nil)
	if err != nil {
		t.Fatalf("sender: %v", err)
	}
	defer sender.Close(ctx)
	body := fmt.Sprintf("hello from testcontainers-go %d", time.Now().UnixNano())
	msg := &azservicebus.Message{Body: []byte(body), ApplicationProperties: map[string]any{"via": "go"}}
	if contentType != "" {
		msg.ContentType = &contentType
	}
	if err := sender.SendMessage(ctx, msg, nil); err != nil {
		t.Fatalf("send to %s: %v", entity, err)
	}
	var receiver *azservicebus.Receiver
	if sub == "" {
		receiver, err = client.NewReceiverForQueue(entity, nil)
	} else {
		receiver, err = client.NewReceiverForSubscription(entity, sub, nil)
	}
	if err != nil {
		t.Fatalf("receiver: %v", err)
	}
	defer receiver.Close(ctx)
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	msgs, err := receiver.ReceiveMessages(rctx, 1, nil)
	if err != nil {
		t.Fatalf("receive from %s %s: %v", entity, sub, err)
	}
	if len(msgs) != 1 || string(msgs[0].Body) != body || msgs[0].ApplicationProperties["via"] != "go" {
		t.Fatalf("received %d message(s), want one with body %q", len(msgs), body)
	}
	if err := receiver.CompleteMessage(ctx, msgs[0], nil); err != nil {
		t.Fatalf("complete: %v", err)
	}
	// Nothing left: a short receive comes back empty.
	pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
	defer pcancel()
	rest, err := receiver.ReceiveMessages(pctx, 1, nil)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second receive: %v", err)
	}
	if len(rest) != 0 {
		t.Fatalf("the completed message came back")
	}
}

// The README's line: servicebus.Run(ctx, "sbemu:latest", servicebus.WithAcceptEULA()).
func TestReadmeLineDefaultEntities(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ctr, err := servicebus.Run(ctx, image(), servicebus.WithAcceptEULA())
	defer terminate(t, ctr)
	if err != nil {
		t.Fatalf("servicebus.Run: %v", err)
	}
	if ctr.MSSQLContainer() == nil {
		t.Fatal("the module started no SQL Server container")
	}
	cs := checkConnectionString(t, ctx, ctr)
	// Without a Config.json the image's default entities exist.
	roundTrip(t, ctx, cs, "queue.1", "", "")
	// subscription.1 keeps what its default rule (a correlation filter) matches.
	roundTrip(t, ctx, cs, "topic.1", "subscription.1", "application/json")
}

// servicebus.WithConfig, as the module's example passes it.
func TestWithConfig(t *testing.T) {
	cfg := `{
    "UserConfig": {
        "Namespaces": [
            {
                "Name": "sbemulatorns",
                "Queues": [
                    {
                        "Name": "go.queue",
                        "Properties": {
                            "DeadLetteringOnMessageExpiration": false,
                            "DefaultMessageTimeToLive": "PT1H",
                            "DuplicateDetectionHistoryTimeWindow": "PT20S",
                            "ForwardDeadLetteredMessagesTo": "",
                            "ForwardTo": "",
                            "LockDuration": "PT1M",
                            "MaxDeliveryCount": 10,
                            "RequiresDuplicateDetection": false,
                            "RequiresSession": false
                        }
                    }
                ],
                "Topics": [
                    {
                        "Name": "go.topic",
                        "Properties": {
                            "DefaultMessageTimeToLive": "PT1H",
                            "DuplicateDetectionHistoryTimeWindow": "PT20S",
                            "RequiresDuplicateDetection": false
                        },
                        "Subscriptions": [
                            {
                                "Name": "go.sub",
                                "Properties": {
                                    "DeadLetteringOnMessageExpiration": false,
                                    "DefaultMessageTimeToLive": "PT1H",
                                    "LockDuration": "PT1M",
                                    "MaxDeliveryCount": 10,
                                    "ForwardDeadLetteredMessagesTo": "",
                                    "ForwardTo": "",
                                    "RequiresSession": false
                                },
                                "Rules": [
                                    {
                                        "Name": "via-go",
                                        "Properties": {
                                            "FilterType": "Sql",
                                            "SqlFilter": { "SqlExpression": "via = 'go'" }
                                        }
                                    }
                                ]
                            }
                        ]
                    }
                ]
            }
        ],
        "Logging": {
            "Type": "File"
        }
    }
}`
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ctr, err := servicebus.Run(ctx, image(), servicebus.WithAcceptEULA(), servicebus.WithConfig(strings.NewReader(cfg)))
	defer terminate(t, ctr)
	if err != nil {
		t.Fatalf("servicebus.Run: %v", err)
	}
	cs := checkConnectionString(t, ctx, ctr)
	roundTrip(t, ctx, cs, "go.queue", "", "")
	roundTrip(t, ctx, cs, "go.topic", "go.sub", "") // its SQL rule matches via = 'go'

	// The file replaced the defaults: queue.1 was not created.
	client, err := azservicebus.NewClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close(ctx)
	sender, err := client.NewSender("queue.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sender.Close(ctx)
	// The put-token for an entity that does not exist is answered 404, as Service
	// Bus answers it, which azservicebus reports as CodeNotFound.
	err = sender.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil)
	var sbErr *azservicebus.Error
	if !errors.As(err, &sbErr) || sbErr.Code != azservicebus.CodeNotFound {
		t.Fatalf("send to queue.1, which the Config.json does not name: %v, want CodeNotFound", err)
	}
}

// servicebus.WithMSSQL: the SQL Server image and options of the user's.
func TestWithMSSQL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ctr, err := servicebus.Run(ctx, image(), servicebus.WithAcceptEULA(),
		servicebus.WithMSSQL("mcr.microsoft.com/mssql/server:2022-latest", mssql.WithPassword("MyC0mplexP@ssw0rd!")))
	defer terminate(t, ctr)
	if err != nil {
		t.Fatalf("servicebus.Run: %v", err)
	}
	if got := ctr.MSSQLContainer().Password(); got != "MyC0mplexP@ssw0rd!" {
		t.Fatalf("SQL Server password %q", got)
	}
	roundTrip(t, ctx, checkConnectionString(t, ctx, ctr), "queue.1", "", "")
}
