// Receiving with the Go SDK: peek-lock and receive-and-delete, the receive loop of the SDK's
// docs, complete, abandon with properties, defer and ReceiveDeferredMessages, dead-letter
// with reason and description and the dead-letter subqueue, RenewMessageLock, a lock lost
// (LockDuration PT5S), and PeekMessages from a sequence number, also of large messages.
package receive

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"sbemu/tests/e2e/go/internal/harness"
)

const shortLock = 5 * time.Second

func TestMain(m *testing.M) {
	qs := []harness.Queue{}
	for _, n := range []string{"peeklock", "rad", "loop", "abandon", "defer", "deadletter", "peek", "bigpeek"} {
		qs = append(qs, harness.Queue{Name: n})
	}
	qs = append(qs,
		harness.Queue{Name: "renew", Properties: harness.Props{"LockDuration": "PT5S"}},
		harness.Queue{Name: "locklost", Properties: harness.Props{"LockDuration": "PT5S"}},
		harness.Queue{Name: "maxdelivery", Properties: harness.Props{"MaxDeliveryCount": 2}},
	)
	harness.Main(m, harness.Options{Name: "receive", Queues: qs})
}

func send(t *testing.T, c *azservicebus.Client, q string, ids ...string) {
	t.Helper()
	s, err := c.NewSender(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := harness.Ctx(t, 30*time.Second)
	for _, id := range ids {
		if err := s.SendMessage(ctx, &azservicebus.Message{Body: []byte("body of " + id), MessageID: harness.Ptr(id)}, nil); err != nil {
			t.Fatalf("SendMessage %s: %v", id, err)
		}
	}
}

func receiver(t *testing.T, c *azservicebus.Client, q string, opts *azservicebus.ReceiverOptions) *azservicebus.Receiver {
	t.Helper()
	r, err := c.NewReceiverForQueue(q, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// one receives exactly one message (waiting for it).
func one(t *testing.T, r *azservicebus.Receiver) *azservicebus.ReceivedMessage {
	t.Helper()
	msgs, err := r.ReceiveMessages(harness.Ctx(t, 20*time.Second), 1, nil)
	if err != nil {
		t.Fatalf("ReceiveMessages: %v", err)
	}
	if len(msgs) != 1 {
		t.Fatalf("ReceiveMessages gave %d messages", len(msgs))
	}
	return msgs[0]
}

func peekIDs(t *testing.T, r *azservicebus.Receiver) []string {
	t.Helper()
	msgs, err := r.PeekMessages(harness.Ctx(t, 20*time.Second), 100, &azservicebus.PeekMessagesOptions{FromSequenceNumber: harness.Ptr(int64(0))})
	if err != nil {
		t.Fatalf("PeekMessages: %v", err)
	}
	ids := []string{}
	for _, m := range msgs {
		ids = append(ids, m.MessageID)
	}
	return ids
}

func TestPeekLockComplete(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	send(t, c, "peeklock", "a", "b")
	r := receiver(t, c, "peeklock", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModePeekLock})
	msgs, err := r.ReceiveMessages(ctx, 2, nil)
	if err != nil || len(msgs) == 0 {
		t.Fatalf("ReceiveMessages: %d, %v", len(msgs), err)
	}
	first := msgs[0]
	if first.MessageID != "a" || first.LockedUntil == nil || first.LockToken == ([16]byte{}) {
		t.Fatalf("first: %q locked until %v", first.MessageID, first.LockedUntil)
	}
	// Locked: a second receiver does not get it, and peek still sees it.
	if ids := peekIDs(t, r); len(ids) != 2 {
		t.Fatalf("peek while locked: %v", ids)
	}
	if err := r.CompleteMessage(ctx, first, nil); err != nil {
		t.Fatalf("CompleteMessage: %v", err)
	}
	rest := msgs[1:]
	if len(rest) == 0 {
		rest = []*azservicebus.ReceivedMessage{one(t, r)}
	}
	if rest[0].MessageID != "b" {
		t.Fatalf("second message %q", rest[0].MessageID)
	}
	if err := r.CompleteMessage(ctx, rest[0], nil); err != nil {
		t.Fatal(err)
	}
	if ids := peekIDs(t, r); len(ids) != 0 {
		t.Fatalf("after completes, peek: %v", ids)
	}
}

func TestReceiveAndDelete(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	send(t, c, "rad", "r1", "r2", "r3")
	r := receiver(t, c, "rad", &azservicebus.ReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	var got []string
	for len(got) < 3 {
		msgs, err := r.ReceiveMessages(ctx, 3, nil)
		if err != nil {
			t.Fatalf("ReceiveMessages: %v", err)
		}
		for _, m := range msgs {
			got = append(got, m.MessageID)
		}
	}
	if fmt.Sprint(got) != "[r1 r2 r3]" {
		t.Fatalf("received %v", got)
	}
	// Settling is refused by the SDK itself in this mode; the messages are already gone.
	if ids := peekIDs(t, r); len(ids) != 0 {
		t.Fatalf("after receive-and-delete, peek: %v", ids)
	}
}

// The loop of the SDK's docs: ReceiveMessages again and again, completing each message.
func TestReceiveLoop(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	const n = 57
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("loop-%02d", i)
	}
	send(t, c, "loop", ids...)
	r := receiver(t, c, "loop", nil)
	ctx := harness.Ctx(t, 60*time.Second)
	seen := map[string]int{}
	var order []string
	calls := 0
	for len(order) < n {
		calls++
		messages, err := r.ReceiveMessages(ctx, 10, nil)
		if err != nil {
			t.Fatalf("ReceiveMessages (call %d, %d so far): %v", calls, len(order), err)
		}
		if len(messages) > 10 {
			t.Fatalf("asked for 10, got %d", len(messages))
		}
		for _, m := range messages {
			seen[m.MessageID]++
			order = append(order, m.MessageID)
			if err := r.CompleteMessage(ctx, m, nil); err != nil {
				t.Fatalf("CompleteMessage %s: %v", m.MessageID, err)
			}
		}
	}
	for i, id := range ids {
		if order[i] != id || seen[id] != 1 {
			t.Fatalf("message %d: %s (seen %d times), want %s once", i, order[i], seen[id], id)
		}
	}
	if len(order) != n {
		t.Fatalf("received %d, want %d", len(order), n)
	}
	if rest := peekIDs(t, r); len(rest) != 0 {
		t.Fatalf("left in the queue: %v", rest)
	}
}

func TestAbandonWithProperties(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	send(t, c, "abandon", "ab")
	r := receiver(t, c, "abandon", nil)
	m := one(t, r)
	if err := r.AbandonMessage(ctx, m, &azservicebus.AbandonMessageOptions{PropertiesToModify: map[string]any{"reason": "retry", "attempt": int32(1)}}); err != nil {
		t.Fatalf("AbandonMessage: %v", err)
	}
	again := one(t, r)
	if again.MessageID != "ab" || again.DeliveryCount != 2 {
		t.Fatalf("after abandon: %q with DeliveryCount %d, want ab with 2", again.MessageID, again.DeliveryCount)
	}
	if again.ApplicationProperties["reason"] != "retry" || again.ApplicationProperties["attempt"] != int32(1) {
		t.Errorf("properties after abandon: %v", again.ApplicationProperties)
	}
	// Abandon without options too.
	if err := r.AbandonMessage(ctx, again, nil); err != nil {
		t.Fatalf("AbandonMessage: %v", err)
	}
	third := one(t, r)
	if third.DeliveryCount != 3 || third.ApplicationProperties["reason"] != "retry" {
		t.Errorf("third delivery: count %d, properties %v", third.DeliveryCount, third.ApplicationProperties)
	}
	if err := r.CompleteMessage(ctx, third, nil); err != nil {
		t.Fatal(err)
	}
}

func TestMaxDeliveryCountDeadLetters(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	send(t, c, "maxdelivery", "md")
	r := receiver(t, c, "maxdelivery", nil)
	for i := 0; i < 2; i++ {
		if err := r.AbandonMessage(ctx, one(t, r), nil); err != nil {
			t.Fatal(err)
		}
	}
	dlq := receiver(t, c, "maxdelivery", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	m := one(t, dlq)
	if m.MessageID != "md" || m.DeadLetterReason == nil || *m.DeadLetterReason != "MaxDeliveryCountExceeded" {
		t.Fatalf("dead-lettered %q, reason %v", m.MessageID, m.DeadLetterReason)
	}
	if err := dlq.CompleteMessage(ctx, m, nil); err != nil {
		t.Fatal(err)
	}
}

func TestDeferAndReceiveDeferred(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	send(t, c, "defer", "d1", "d2", "d3")
	r := receiver(t, c, "defer", nil)
	var seqs []int64
	for i := 0; i < 2; i++ {
		m := one(t, r)
		seqs = append(seqs, *m.SequenceNumber)
		if err := r.DeferMessage(ctx, m, &azservicebus.DeferMessageOptions{PropertiesToModify: map[string]any{"deferred": true}}); err != nil {
			t.Fatalf("DeferMessage: %v", err)
		}
	}
	// A deferred message is not received again; the next one is d3.
	if m := one(t, r); m.MessageID != "d3" {
		t.Fatalf("after deferring two, received %q", m.MessageID)
	} else if err := r.CompleteMessage(ctx, m, nil); err != nil {
		t.Fatal(err)
	}
	peeked, err := r.PeekMessages(ctx, 10, &azservicebus.PeekMessagesOptions{FromSequenceNumber: &seqs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if len(peeked) != 2 || peeked[0].State != azservicebus.MessageStateDeferred {
		t.Fatalf("peek of deferred: %d messages, state %v", len(peeked), peeked[0].State)
	}
	// A sequence number that is not a deferred message fails the whole call, as in Service Bus.
	if _, err := r.ReceiveDeferredMessages(ctx, []int64{seqs[0], 999999}, nil); harness.Code(err) != azservicebus.CodeNotFound {
		t.Errorf("ReceiveDeferredMessages with an unknown sequence number: %v, want CodeNotFound", err)
	}
	got, err := r.ReceiveDeferredMessages(ctx, []int64{seqs[1], seqs[0]}, nil)
	if err != nil {
		t.Fatalf("ReceiveDeferredMessages: %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("ReceiveDeferredMessages gave %d messages, want 2", len(got))
	}
	byID := map[string]*azservicebus.ReceivedMessage{}
	for _, m := range got {
		byID[m.MessageID] = m
		if m.State != azservicebus.MessageStateDeferred || m.ApplicationProperties["deferred"] != true || m.LockedUntil == nil {
			t.Errorf("%s: state %v, properties %v, locked until %v", m.MessageID, m.State, m.ApplicationProperties, m.LockedUntil)
		}
	}
	if byID["d1"] == nil || byID["d2"] == nil {
		t.Fatalf("deferred messages: %v", byID)
	}
	// Settled over $management (update-disposition): renew, abandon (stays deferred), complete.
	if err := r.RenewMessageLock(ctx, byID["d1"], nil); err != nil {
		t.Fatalf("RenewMessageLock of a deferred message: %v", err)
	}
	if err := r.AbandonMessage(ctx, byID["d2"], nil); err != nil {
		t.Fatalf("AbandonMessage of a deferred message: %v", err)
	}
	if err := r.CompleteMessage(ctx, byID["d1"], nil); err != nil {
		t.Fatalf("CompleteMessage of a deferred message: %v", err)
	}
	again, err := r.ReceiveDeferredMessages(ctx, []int64{seqs[1]}, nil)
	if err != nil || len(again) != 1 {
		t.Fatalf("ReceiveDeferredMessages after abandon: %d, %v", len(again), err)
	}
	if err := r.DeadLetterMessage(ctx, again[0], &azservicebus.DeadLetterOptions{Reason: harness.Ptr("from-deferred")}); err != nil {
		t.Fatalf("DeadLetterMessage of a deferred message: %v", err)
	}
	if ids := peekIDs(t, r); len(ids) != 0 {
		t.Fatalf("left: %v", ids)
	}
	dlq := receiver(t, c, "defer", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	if m := one(t, dlq); m.MessageID != "d2" || m.DeadLetterReason == nil || *m.DeadLetterReason != "from-deferred" {
		t.Fatalf("dead-letter queue has %q (%v)", m.MessageID, m.DeadLetterReason)
	}
}

func TestDeadLetterAndSubQueue(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	send(t, c, "deadletter", "dl1", "dl2")
	r := receiver(t, c, "deadletter", nil)
	m := one(t, r)
	if err := r.DeadLetterMessage(ctx, m, &azservicebus.DeadLetterOptions{
		Reason:             harness.Ptr("bad-input"),
		ErrorDescription:   harness.Ptr("the order has no customer"),
		PropertiesToModify: map[string]any{"checked-by": "go"},
	}); err != nil {
		t.Fatalf("DeadLetterMessage: %v", err)
	}
	m2 := one(t, r)
	if err := r.DeadLetterMessage(ctx, m2, nil); err != nil {
		t.Fatalf("DeadLetterMessage without options: %v", err)
	}
	if ids := peekIDs(t, r); len(ids) != 0 {
		t.Fatalf("queue still has %v", ids)
	}
	dlq := receiver(t, c, "deadletter", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	if ids := peekIDs(t, dlq); fmt.Sprint(ids) != "[dl1 dl2]" {
		t.Fatalf("dead-letter peek: %v", ids)
	}
	d := one(t, dlq)
	if d.MessageID != "dl1" || deref(d.DeadLetterReason) != "bad-input" || deref(d.DeadLetterErrorDescription) != "the order has no customer" {
		t.Fatalf("dead-lettered %q: reason %v, description %v", d.MessageID, deref(d.DeadLetterReason), deref(d.DeadLetterErrorDescription))
	}
	if d.ApplicationProperties["checked-by"] != "go" {
		t.Errorf("properties: %v", d.ApplicationProperties)
	}
	if !bytes.Equal(d.Body, []byte("body of dl1")) {
		t.Errorf("body %q", d.Body)
	}
	// Abandon in the dead-letter queue keeps it there; complete removes it.
	if err := dlq.AbandonMessage(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		x := one(t, dlq)
		if err := dlq.CompleteMessage(ctx, x, nil); err != nil {
			t.Fatal(err)
		}
	}
	if ids := peekIDs(t, dlq); len(ids) != 0 {
		t.Fatalf("dead-letter queue still has %v", ids)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestRenewMessageLock(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 40*time.Second)
	send(t, c, "renew", "rn")
	r := receiver(t, c, "renew", nil)
	m := one(t, r)
	first := *m.LockedUntil
	if d := time.Until(first); d > shortLock+2*time.Second || d < 0 {
		t.Fatalf("LockedUntil %v is %v away, LockDuration is %v", first, d, shortLock)
	}
	// Renew twice, 3 s apart: at the end the message has been held 7 s, past the first lock.
	for i := 0; i < 2; i++ {
		time.Sleep(3 * time.Second)
		if err := r.RenewMessageLock(ctx, m, nil); err != nil {
			t.Fatalf("RenewMessageLock %d: %v", i, err)
		}
	}
	time.Sleep(time.Second)
	if !m.LockedUntil.After(first.Add(5 * time.Second)) {
		t.Errorf("LockedUntil went from %v to %v after two renewals", first, *m.LockedUntil)
	}
	if err := r.CompleteMessage(ctx, m, nil); err != nil {
		t.Fatalf("CompleteMessage after renewals (held %v): %v", time.Since(first.Add(-shortLock)), err)
	}
	if ids := peekIDs(t, r); len(ids) != 0 {
		t.Fatalf("left: %v", ids)
	}
}

func TestLockLost(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 40*time.Second)
	send(t, c, "locklost", "ll")
	r := receiver(t, c, "locklost", nil)
	m := one(t, r)
	// Wait out the lock (PT5S) by the message's own LockedUntil.
	time.Sleep(time.Until(*m.LockedUntil) + 1500*time.Millisecond)
	err := r.CompleteMessage(ctx, m, nil)
	if harness.Code(err) != azservicebus.CodeLockLost {
		t.Fatalf("CompleteMessage after the lock expired: %v, want CodeLockLost", err)
	}
	if err := r.RenewMessageLock(ctx, m, nil); harness.Code(err) != azservicebus.CodeLockLost {
		t.Errorf("RenewMessageLock after the lock expired: %v, want CodeLockLost", err)
	}
	// The message is back, delivered a second time.
	again := one(t, r)
	if again.MessageID != "ll" || again.DeliveryCount != 2 {
		t.Fatalf("redelivered %q with DeliveryCount %d", again.MessageID, again.DeliveryCount)
	}
	if err := r.CompleteMessage(ctx, again, nil); err != nil {
		t.Fatal(err)
	}
}

func TestPeekFromSequenceNumber(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	send(t, c, "peek", "p0", "p1", "p2", "p3", "p4")
	r := receiver(t, c, "peek", nil)
	ids := func(ms []*azservicebus.ReceivedMessage) string {
		var out []string
		for _, m := range ms {
			if m.LockToken != ([16]byte{}) || m.LockedUntil != nil {
				t.Errorf("peeked %s has a lock (token %x, until %v)", m.MessageID, m.LockToken, m.LockedUntil)
			}
			out = append(out, m.MessageID)
		}
		return fmt.Sprint(out)
	}
	peek := func(n int, from *int64) []*azservicebus.ReceivedMessage {
		ms, err := r.PeekMessages(ctx, n, &azservicebus.PeekMessagesOptions{FromSequenceNumber: from})
		if err != nil {
			t.Fatalf("PeekMessages(%d, %v): %v", n, from, err)
		}
		return ms
	}
	first := peek(2, nil)
	if got := ids(first); got != "[p0 p1]" {
		t.Fatalf("first peek: %s", got)
	}
	// Without a sequence number the receiver goes on after what it last peeked.
	if got := ids(peek(2, nil)); got != "[p2 p3]" {
		t.Fatalf("second peek: %s", got)
	}
	// From a sequence number: that message on, and the receiver's own place does not move.
	if got := ids(peek(2, first[1].SequenceNumber)); got != "[p1 p2]" {
		t.Fatalf("peek from p1's sequence number: %s", got)
	}
	if got := ids(peek(10, nil)); got != "[p4]" {
		t.Fatalf("third peek: %s", got)
	}
	if got := peek(10, nil); len(got) != 0 {
		t.Fatalf("peek past the end: %s", ids(got))
	}
	// Peeking moves nothing: all five are still received in order, delivered once.
	for i := 0; i < 5; i++ {
		m := one(t, r)
		if m.MessageID != fmt.Sprintf("p%d", i) || m.DeliveryCount != 1 {
			t.Fatalf("received %q with DeliveryCount %d", m.MessageID, m.DeliveryCount)
		}
		if err := r.CompleteMessage(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// A peek answer with several 200 KB messages is bigger than the emulator's max-message-size:
// the management link must not limit what it sends (go-amqp enforces the peer's
// max-message-size on what it receives).
func TestPeekLargeMessages(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	s, _ := c.NewSender("bigpeek", nil)
	body := bytes.Repeat([]byte("L"), 200*1024)
	for i := 0; i < 3; i++ {
		if err := s.SendMessage(ctx, &azservicebus.Message{Body: body, MessageID: harness.Ptr(fmt.Sprint("big", i))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	r := receiver(t, c, "bigpeek", nil)
	peeked, err := r.PeekMessages(ctx, 3, nil)
	if err != nil {
		t.Fatalf("PeekMessages of 3 x 200 KB: %v", err)
	}
	if len(peeked) != 3 || !bytes.Equal(peeked[2].Body, body) {
		t.Fatalf("peeked %d", len(peeked))
	}
	var seqs []int64
	for i := 0; i < 3; i++ {
		m := one(t, r)
		seqs = append(seqs, *m.SequenceNumber)
		if err := r.DeferMessage(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.ReceiveDeferredMessages(ctx, seqs, nil)
	if err != nil || len(got) != 3 {
		t.Fatalf("ReceiveDeferredMessages of 3 x 200 KB: %d, %v", len(got), err)
	}
	for _, m := range got {
		if !bytes.Equal(m.Body, body) {
			t.Fatalf("%s: %d bytes", m.MessageID, len(m.Body))
		}
		if err := r.CompleteMessage(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
}

