// --max-message-size with the Go SDK, on an emulator started with a small limit (64 KiB): the
// sender link's max-message-size is what NewMessageBatch sizes by; a message of exactly the
// limit goes through and comes back whole; one byte over is ErrMessageTooLarge (go-amqp checks
// the encoded size against the attach before sending anything).
package size

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"sbemu/tests/e2e/go/internal/harness"
)

const limit = 64 * 1024

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Name: "size", Queues: []harness.Queue{{Name: "limit"}, {Name: "batch"}},
		Args: []string{"--max-message-size", "64k"}})
}

func TestMessageAtAndOverTheLimit(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	s, _ := c.NewSender("limit", nil)
	body := harness.BodyForEncodedSize(t, limit, "at-limit")
	if err := s.SendMessage(ctx, &azservicebus.Message{Body: body, MessageID: harness.Ptr("at-limit")}, nil); err != nil {
		t.Fatalf("SendMessage of exactly %d encoded bytes: %v", limit, err)
	}
	over := append(append([]byte{}, body...), 1)
	if err := s.SendMessage(ctx, &azservicebus.Message{Body: over, MessageID: harness.Ptr("at-limit")}, nil); !errors.Is(err, azservicebus.ErrMessageTooLarge) {
		t.Fatalf("SendMessage one byte over: %v, want ErrMessageTooLarge", err)
	}
	if err := s.SendMessage(ctx, &azservicebus.Message{Body: make([]byte, 10*limit)}, nil); !errors.Is(err, azservicebus.ErrMessageTooLarge) {
		t.Fatalf("SendMessage of 640 KiB: %v, want ErrMessageTooLarge", err)
	}
	r, _ := c.NewReceiverForQueue("limit", nil)
	msgs, err := r.ReceiveMessages(ctx, 2, nil)
	if err != nil || len(msgs) != 1 || !bytes.Equal(msgs[0].Body, body) {
		t.Fatalf("received %d messages (%v); want only the one at the limit, whole", len(msgs), err)
	}
	if err := r.CompleteMessage(ctx, msgs[0], nil); err != nil {
		t.Fatal(err)
	}
}

func TestBatchSizedByTheLimit(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	s, _ := c.NewSender("batch", nil)
	b, err := s.NewMessageBatch(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		err := b.AddMessage(&azservicebus.Message{Body: make([]byte, 10*1024)}, nil)
		if errors.Is(err, azservicebus.ErrMessageTooLarge) {
			break
		}
		if err != nil || n > 100 {
			t.Fatalf("AddMessage %d: %v", n, err)
		}
	}
	if n != 6 || b.NumBytes() > limit {
		t.Errorf("a 64 KiB batch took %d messages of 10 KiB (%d bytes)", n, b.NumBytes())
	}
	if err := s.SendMessageBatch(ctx, b, nil); err != nil {
		t.Fatalf("SendMessageBatch: %v", err)
	}
	r, _ := c.NewReceiverForQueue("batch", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	got := 0
	for got < n {
		msgs, err := r.ReceiveMessages(ctx, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		got += len(msgs)
	}
}
