// The smallest round trip: one message sent and received in peek-lock, then completed.
package basic

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"sbemu/tests/e2e/go/internal/harness"
)

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Name: "basic", Queues: []harness.Queue{{Name: "basic"}}})
}

func TestSendReceiveComplete(t *testing.T) {
	e := harness.Get(t)
	c := e.Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)

	s, err := c.NewSender("basic", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendMessage(ctx, &azservicebus.Message{Body: []byte("hello"), MessageID: harness.Ptr("m1")}, nil); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	r, err := c.NewReceiverForQueue("basic", nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := r.ReceiveMessages(ctx, 1, nil)
	if err != nil {
		t.Fatalf("ReceiveMessages: %v", err)
	}
	if len(msgs) != 1 || string(msgs[0].Body) != "hello" || msgs[0].MessageID != "m1" {
		t.Fatalf("got %d messages: %+v", len(msgs), msgs)
	}
	if msgs[0].DeliveryCount != 1 {
		t.Errorf("DeliveryCount = %d, want 1 on first delivery", msgs[0].DeliveryCount)
	}
	if err := r.CompleteMessage(ctx, msgs[0], nil); err != nil {
		t.Fatalf("CompleteMessage: %v", err)
	}
	peeked, err := r.PeekMessages(ctx, 10, nil)
	if err != nil {
		t.Fatalf("PeekMessages: %v", err)
	}
	if len(peeked) != 0 {
		t.Fatalf("after complete, peek found %d messages", len(peeked))
	}
}
