// Errors as the Go SDK maps them (azservicebus.Error codes): CodeNotFound for an entity that
// does not exist (the SDK learns it from the $cbs put-token answer, 404), CodeUnauthorizedAccess
// for a wrong key (put-token 401), quota exceeded (MaxSizeInMegabytes) as the
// amqp:resource-limit-exceeded the SDK returns without retrying, a disabled entity. CodeLockLost
// is in receive (TestLockLost), CodeTimeout in sessions (TestAcceptNextSessionTimeout),
// ErrMessageTooLarge in send and size.
package errors_test

import (
	"errors"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"
	"sbemu/tests/e2e/go/internal/harness"
)

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Name: "errors", Queues: []harness.Queue{
		{Name: "exists"},
		{Name: "small", Properties: harness.Props{"MaxSizeInMegabytes": 1}},
	}, Topics: []harness.Topic{{Name: "topic", Subscriptions: []harness.Subscription{{Name: "sub"}}}}})
}

func wantCode(t *testing.T, what string, err error, code azservicebus.Code) {
	t.Helper()
	if harness.Code(err) != code {
		t.Errorf("%s: %v (%T), want an *azservicebus.Error with Code %q", what, err, err, code)
	}
}

func TestNotFound(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 60*time.Second)
	start := time.Now()
	s, err := c.NewSender("no-such-queue", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, "SendMessage to a missing queue", s.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil), azservicebus.CodeNotFound)
	r, err := c.NewReceiverForQueue("no-such-queue", nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := r.ReceiveMessages(ctx, 1, nil)
	if msgs != nil {
		t.Errorf("messages from a missing queue: %v", msgs)
	}
	wantCode(t, "ReceiveMessages from a missing queue", err, azservicebus.CodeNotFound)
	rs, err := c.NewReceiverForSubscription("topic", "no-such-sub", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rs.PeekMessages(ctx, 1, nil)
	wantCode(t, "PeekMessages on a missing subscription", err, azservicebus.CodeNotFound)
	_, err = c.AcceptSessionForQueue(ctx, "no-such-queue", "s", nil)
	wantCode(t, "AcceptSessionForQueue on a missing queue", err, azservicebus.CodeNotFound)
	_, err = c.AcceptNextSessionForQueue(ctx, "no-such-queue", nil)
	wantCode(t, "AcceptNextSessionForQueue on a missing queue", err, azservicebus.CodeNotFound)
	// Not found is not retried.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("five not-found answers took %v", d)
	}
	// The same client still works for what exists.
	s2, _ := c.NewSender("exists", nil)
	if err := s2.SendMessage(ctx, &azservicebus.Message{Body: []byte("ok")}, nil); err != nil {
		t.Fatalf("SendMessage to an existing queue after the not-founds: %v", err)
	}
}

func TestUnauthorized(t *testing.T) {
	e := harness.Get(t)
	ctx := harness.Ctx(t, 60*time.Second)
	for name, cs := range map[string]string{
		"wrong key": harness.ConnectionString(e.AMQPPort, harness.SASKeyName, "d3Jvbmcga2V5"),
		// a key name that cannot name a namespace (a dot): any other key name
		// puts the client in a namespace of that name (see README, Namespaces)
		"wrong key name": harness.ConnectionString(e.AMQPPort, "Some.Other.Key", harness.SASKey),
	} {
		c, err := azservicebus.NewClientFromConnectionString(cs, &azservicebus.ClientOptions{RetryOptions: harness.FastRetries})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := c.NewSender("exists", nil)
		wantCode(t, name+": SendMessage", s.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil), azservicebus.CodeUnauthorizedAccess)
		r, _ := c.NewReceiverForQueue("exists", nil)
		_, err = r.ReceiveMessages(ctx, 1, nil)
		wantCode(t, name+": ReceiveMessages", err, azservicebus.CodeUnauthorizedAccess)
		_ = c.Close(ctx)
	}
}

// MaxSizeInMegabytes 1: 60 KB messages are taken until the queue holds about 1 MB, then a send
// is refused with amqp:resource-limit-exceeded (Service Bus' QuotaExceeded), which azservicebus
// gives back as the *amqp.Error, not retried. Once a message is received, sends go in again.
func TestQuotaExceeded(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 60*time.Second)
	s, _ := c.NewSender("small", nil)
	body := make([]byte, 60*1024)
	var refused error
	n := 0
	for ; n < 25; n++ {
		if refused = s.SendMessage(ctx, &azservicebus.Message{Body: body}, nil); refused != nil {
			break
		}
	}
	var amqpErr *amqp.Error
	if !errors.As(refused, &amqpErr) || amqpErr.Condition != amqp.ErrCondResourceLimitExceeded {
		t.Fatalf("after %d sends of 60 KB into a 1 MB queue: %v, want amqp:resource-limit-exceeded", n, refused)
	}
	if n < 15 || n > 17 {
		t.Errorf("refused at send %d; 1 MB holds 16 or 17 of them", n)
	}
	r, _ := c.NewReceiverForQueue("small", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	if msgs, err := r.ReceiveMessages(ctx, 3, nil); err != nil || len(msgs) == 0 {
		t.Fatalf("ReceiveMessages: %v", err)
	}
	harness.Eventually(t, 10*time.Second, "a send after room was made", func() (bool, error) {
		err := s.SendMessage(ctx, &azservicebus.Message{Body: body}, nil)
		return err == nil, err
	})
}
