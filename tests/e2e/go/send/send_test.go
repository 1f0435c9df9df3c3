// Sending with the Go SDK: one message with every property it has, application properties of
// every type it can encode, AMQP messages with value and sequence bodies, batches
// (NewMessageBatch, AddMessage's ErrMessageTooLarge, a batch over the emulator's limit),
// scheduled messages and their cancellation, and a message at the default 256 KiB limit (more
// than one transfer frame). Every message is read back and compared field by field.
package send

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"
	"sbemu/tests/e2e/go/internal/harness"
)

const defaultMaxMessageSize = 262144 // sbemu's --max-message-size default, Service Bus Standard's

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Name: "send", Queues: []harness.Queue{
		{Name: "props"}, {Name: "appprops"}, {Name: "amqpmsg"}, {Name: "batch"}, {Name: "bigbatch"},
		{Name: "scheduled"}, {Name: "atlimit"},
	}})
}

func sender(t *testing.T, c *azservicebus.Client, q string) *azservicebus.Sender {
	t.Helper()
	s, err := c.NewSender(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// receiveAll takes n messages in peek-lock and completes them, failing if fewer come in time.
func receiveAll(t *testing.T, c *azservicebus.Client, q string, n int) []*azservicebus.ReceivedMessage {
	t.Helper()
	r, err := c.NewReceiverForQueue(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := harness.Ctx(t, 30*time.Second)
	var got []*azservicebus.ReceivedMessage
	for len(got) < n {
		msgs, err := r.ReceiveMessages(ctx, n-len(got), nil)
		if err != nil {
			t.Fatalf("ReceiveMessages after %d of %d: %v", len(got), n, err)
		}
		for _, m := range msgs {
			if err := r.CompleteMessage(ctx, m, nil); err != nil {
				t.Fatalf("CompleteMessage: %v", err)
			}
		}
		got = append(got, msgs...)
	}
	return got
}

func TestMessageProperties(t *testing.T) {
	e := harness.Get(t)
	c := e.Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	ttl := 10 * time.Minute
	sent := &azservicebus.Message{
		Body:             []byte{0, 1, 2, 0xff, 'x'},
		ContentType:      harness.Ptr("application/octet-stream"),
		CorrelationID:    harness.Ptr("corr-1"),
		MessageID:        harness.Ptr("msg-props-1"),
		PartitionKey:     harness.Ptr("pk-1"),
		ReplyTo:          harness.Ptr("reply-queue"),
		ReplyToSessionID: harness.Ptr("reply-session"),
		Subject:          harness.Ptr("the subject"),
		TimeToLive:       &ttl,
		To:               harness.Ptr("someone"),
	}
	before := time.Now()
	if err := sender(t, c, "props").SendMessage(ctx, sent, nil); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	got := receiveAll(t, c, "props", 1)[0]
	if !bytes.Equal(got.Body, sent.Body) {
		t.Errorf("Body = %v, want %v", got.Body, sent.Body)
	}
	str := func(name string, g, w *string) {
		if g == nil || *g != *w {
			t.Errorf("%s = %v, want %q", name, deref(g), *w)
		}
	}
	str("ContentType", got.ContentType, sent.ContentType)
	str("CorrelationID", got.CorrelationID, sent.CorrelationID)
	str("PartitionKey", got.PartitionKey, sent.PartitionKey)
	str("ReplyTo", got.ReplyTo, sent.ReplyTo)
	str("ReplyToSessionID", got.ReplyToSessionID, sent.ReplyToSessionID)
	str("Subject", got.Subject, sent.Subject)
	str("To", got.To, sent.To)
	if got.MessageID != *sent.MessageID {
		t.Errorf("MessageID = %q", got.MessageID)
	}
	if got.TimeToLive == nil || *got.TimeToLive != ttl {
		t.Errorf("TimeToLive = %v, want %v", got.TimeToLive, ttl)
	}
	if got.SequenceNumber == nil || *got.SequenceNumber < 1 {
		t.Errorf("SequenceNumber = %v", got.SequenceNumber)
	}
	if got.EnqueuedTime == nil || got.EnqueuedTime.Before(before.Add(-5*time.Second)) || got.EnqueuedTime.After(time.Now().Add(5*time.Second)) {
		t.Errorf("EnqueuedTime = %v, sent at %v", got.EnqueuedTime, before)
	}
	if got.ExpiresAt == nil || got.EnqueuedTime == nil || got.ExpiresAt.Sub(*got.EnqueuedTime) != ttl {
		t.Errorf("ExpiresAt = %v, EnqueuedTime = %v, want ExpiresAt = EnqueuedTime + %v", got.ExpiresAt, got.EnqueuedTime, ttl)
	}
	if got.LockedUntil == nil || !got.LockedUntil.After(time.Now()) {
		t.Errorf("LockedUntil = %v, want a time ahead", got.LockedUntil)
	}
	if got.LockToken == ([16]byte{}) {
		t.Errorf("LockToken is zero")
	}
	if got.State != azservicebus.MessageStateActive || got.DeliveryCount != 1 {
		t.Errorf("State = %v, DeliveryCount = %d", got.State, got.DeliveryCount)
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func TestApplicationPropertyTypes(t *testing.T) {
	e := harness.Get(t)
	c := e.Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	when := time.Date(2026, 3, 4, 5, 6, 7, 890_000_000, time.UTC) // AMQP timestamps have ms precision
	uuid := amqp.UUID{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
	props := map[string]any{
		"string":  "héllo wörld",
		"empty":   "",
		"bool_t":  true,
		"bool_f":  false,
		"int8":    int8(-8),
		"int16":   int16(-1600),
		"int32":   int32(-320000),
		"int64":   int64(-6400000000000),
		"uint8":   uint8(200),
		"uint16":  uint16(60000),
		"uint32":  uint32(4000000000),
		"uint64":  uint64(18000000000000000000),
		"float32": float32(3.25),
		"float64": 2.718281828459045,
		"time":    when,
		"binary":  []byte{1, 2, 3},
		"uuid":    uuid,
		"nil":     nil,
	}
	// int and uint are sent as AMQP long and ulong: they come back as int64 and uint64.
	sent := map[string]any{"int": 42, "uint": uint(43)}
	for k, v := range props {
		sent[k] = v
	}
	want := map[string]any{"int": int64(42), "uint": uint64(43)}
	for k, v := range props {
		want[k] = v
	}
	if err := sender(t, c, "appprops").SendMessage(ctx, &azservicebus.Message{Body: []byte("p"), ApplicationProperties: sent}, nil); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	got := receiveAll(t, c, "appprops", 1)[0].ApplicationProperties
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: missing", k)
			continue
		}
		if wt, ok := w.(time.Time); ok {
			gt, ok := g.(time.Time)
			if !ok || !gt.Equal(wt) {
				t.Errorf("%s = %#v (%T), want %v", k, g, g, wt)
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s = %#v (%T), want %#v (%T)", k, g, g, w, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d properties, want %d: %v", len(got), len(want), got)
	}
}

func TestAMQPAnnotatedMessages(t *testing.T) {
	e := harness.Get(t)
	c := e.Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	s := sender(t, c, "amqpmsg")
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	msgs := []*azservicebus.AMQPAnnotatedMessage{
		{
			Body:                  azservicebus.AMQPAnnotatedMessageBody{Value: "a string value"},
			Properties:            &azservicebus.AMQPAnnotatedMessageProperties{MessageID: "value-string", ContentEncoding: harness.Ptr("identity"), CreationTime: &created, GroupSequence: harness.Ptr(uint32(7)), UserID: []byte("user")},
			ApplicationProperties: map[string]any{"kind": "value"},
			MessageAnnotations:    map[any]any{"x-opt-custom": "annotation"},
			Header:                &azservicebus.AMQPAnnotatedMessageHeader{Durable: true, Priority: 7},
			Footer:                map[any]any{"footer-key": "footer-value"},
		},
		{
			Body:       azservicebus.AMQPAnnotatedMessageBody{Value: map[string]any{"n": int64(5), "s": "x"}},
			Properties: &azservicebus.AMQPAnnotatedMessageProperties{MessageID: "value-map"},
		},
		{
			Body:       azservicebus.AMQPAnnotatedMessageBody{Sequence: [][]any{{int64(1), "two"}, {true}}},
			Properties: &azservicebus.AMQPAnnotatedMessageProperties{MessageID: "sequence"},
		},
		{
			Body:       azservicebus.AMQPAnnotatedMessageBody{Data: [][]byte{[]byte("one"), []byte("two")}},
			Properties: &azservicebus.AMQPAnnotatedMessageProperties{MessageID: "two-data-sections"},
		},
	}
	for _, m := range msgs {
		if err := s.SendAMQPAnnotatedMessage(ctx, m, nil); err != nil {
			t.Fatalf("SendAMQPAnnotatedMessage(%v): %v", m.Properties.MessageID, err)
		}
	}
	got := receiveAll(t, c, "amqpmsg", len(msgs))
	for i, g := range got {
		raw := g.RawAMQPMessage
		w := msgs[i]
		if g.MessageID != w.Properties.MessageID {
			t.Fatalf("message %d: MessageID %q, want %q (order kept)", i, g.MessageID, w.Properties.MessageID)
		}
		if !reflect.DeepEqual(raw.Body, w.Body) {
			t.Errorf("%s: body %#v, want %#v", g.MessageID, raw.Body, w.Body)
		}
	}
	first := got[0].RawAMQPMessage
	if first.MessageAnnotations["x-opt-custom"] != "annotation" {
		t.Errorf("message annotations: %v", first.MessageAnnotations)
	}
	if first.Header == nil || !first.Header.Durable || first.Header.Priority != 7 {
		t.Errorf("header: %+v", first.Header)
	}
	if first.Footer["footer-key"] != "footer-value" {
		t.Errorf("footer: %v", first.Footer)
	}
	p := first.Properties
	if p == nil || deref(p.ContentEncoding) != "identity" || p.CreationTime == nil || !p.CreationTime.Equal(created) ||
		p.GroupSequence == nil || *p.GroupSequence != 7 || string(p.UserID) != "user" {
		t.Errorf("properties: %+v", p)
	}
	if got[0].ApplicationProperties["kind"] != "value" {
		t.Errorf("application properties: %v", got[0].ApplicationProperties)
	}
}

func TestMessageBatch(t *testing.T) {
	e := harness.Get(t)
	c := e.Client(t, nil)
	ctx := harness.Ctx(t, 60*time.Second)
	s := sender(t, c, "batch")
	batch, err := s.NewMessageBatch(ctx, nil)
	if err != nil {
		t.Fatalf("NewMessageBatch: %v", err)
	}
	body := bytes.Repeat([]byte("b"), 1024)
	n := 0
	for {
		err := batch.AddMessage(&azservicebus.Message{Body: body, ApplicationProperties: map[string]any{"i": int64(n)}}, nil)
		if errors.Is(err, azservicebus.ErrMessageTooLarge) {
			break
		}
		if err != nil {
			t.Fatalf("AddMessage %d: %v", n, err)
		}
		n++
		if n > 1000 {
			t.Fatalf("AddMessage never said ErrMessageTooLarge: the batch has no limit")
		}
	}
	// The batch's limit is the sender link's max-message-size from the emulator's attach.
	if batch.NumBytes() > defaultMaxMessageSize || batch.NumBytes() < defaultMaxMessageSize-2*1024 {
		t.Errorf("full batch has %d bytes for a %d limit", batch.NumBytes(), defaultMaxMessageSize)
	}
	if int(batch.NumMessages()) != n || n < 200 {
		t.Errorf("NumMessages = %d, added %d", batch.NumMessages(), n)
	}
	// A message too large for any batch is refused the same way.
	if err := batch.AddMessage(&azservicebus.Message{Body: make([]byte, defaultMaxMessageSize)}, nil); !errors.Is(err, azservicebus.ErrMessageTooLarge) {
		t.Errorf("AddMessage of a 256 KiB body: %v, want ErrMessageTooLarge", err)
	}
	if err := s.SendMessageBatch(ctx, batch, nil); err != nil {
		t.Fatalf("SendMessageBatch: %v", err)
	}
	got := receiveAll(t, c, "batch", n)
	for i, m := range got {
		if m.ApplicationProperties["i"] != int64(i) || !bytes.Equal(m.Body, body) {
			t.Fatalf("message %d: i=%v, %d bytes", i, m.ApplicationProperties["i"], len(m.Body))
		}
		if i > 0 && *m.SequenceNumber != *got[i-1].SequenceNumber+1 {
			t.Errorf("sequence numbers not consecutive: %d then %d", *got[i-1].SequenceNumber, *m.SequenceNumber)
		}
	}
}

// A batch built past the emulator's limit (MaxBytes raised by the caller) is refused as
// ErrMessageTooLarge and nothing of it is enqueued. go-amqp checks the encoded batch against
// the max-message-size of the emulator's attach before it sends anything.
func TestBatchOverEmulatorLimit(t *testing.T) {
	e := harness.Get(t)
	c := e.Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	s := sender(t, c, "bigbatch")
	batch, err := s.NewMessageBatch(ctx, &azservicebus.MessageBatchOptions{MaxBytes: 4 * defaultMaxMessageSize})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := batch.AddMessage(&azservicebus.Message{Body: make([]byte, 200*1024)}, nil); err != nil {
			t.Fatalf("AddMessage %d: %v", i, err)
		}
	}
	// SendMessageBatch, unlike SendMessage, does not turn go-amqp's refusal into
	// ErrMessageTooLarge: the caller gets the *amqp.Error itself.
	err = s.SendMessageBatch(ctx, batch, nil)
	var amqpErr *amqp.Error
	if !errors.As(err, &amqpErr) || amqpErr.Condition != amqp.ErrCondMessageSizeExceeded {
		t.Fatalf("SendMessageBatch of %d bytes: %v, want amqp:link:message-size-exceeded", batch.NumBytes(), err)
	}
	// The sender is still usable, and the queue holds only what came after.
	if err := s.SendMessage(ctx, &azservicebus.Message{Body: []byte("after")}, nil); err != nil {
		t.Fatalf("SendMessage after the refusal: %v", err)
	}
	r, _ := c.NewReceiverForQueue("bigbatch", nil)
	peeked, err := r.PeekMessages(ctx, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(peeked) != 1 || string(peeked[0].Body) != "after" {
		t.Fatalf("queue holds %d messages, want only 'after'", len(peeked))
	}
}

func TestScheduleAndCancel(t *testing.T) {
	e := harness.Get(t)
	c := e.Client(t, nil)
	ctx := harness.Ctx(t, 60*time.Second)
	s := sender(t, c, "scheduled")
	later := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	seqs, err := s.ScheduleMessages(ctx, []*azservicebus.Message{
		{Body: []byte("later-1"), MessageID: harness.Ptr("later-1")},
		{Body: []byte("later-2"), MessageID: harness.Ptr("later-2")},
	}, later, nil)
	if err != nil {
		t.Fatalf("ScheduleMessages: %v", err)
	}
	if len(seqs) != 2 || seqs[0] == seqs[1] {
		t.Fatalf("sequence numbers %v", seqs)
	}
	soon := time.Now().Add(1500 * time.Millisecond)
	_, err = s.ScheduleMessages(ctx, []*azservicebus.Message{{Body: []byte("soon"), MessageID: harness.Ptr("soon")}}, soon, nil)
	if err != nil {
		t.Fatalf("ScheduleMessages soon: %v", err)
	}
	// Message.ScheduledEnqueueTime on a plain send schedules too.
	if err := s.SendMessage(ctx, &azservicebus.Message{Body: []byte("by-property"), MessageID: harness.Ptr("by-property"), ScheduledEnqueueTime: &later}, nil); err != nil {
		t.Fatalf("SendMessage with ScheduledEnqueueTime: %v", err)
	}

	r, err := c.NewReceiverForQueue("scheduled", nil)
	if err != nil {
		t.Fatal(err)
	}
	peeked, err := r.PeekMessages(ctx, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*azservicebus.ReceivedMessage{}
	for _, m := range peeked {
		byID[m.MessageID] = m
	}
	for _, id := range []string{"later-1", "later-2", "by-property"} {
		m := byID[id]
		if m == nil {
			t.Fatalf("peek does not show %s (got %d messages)", id, len(peeked))
		}
		if m.State != azservicebus.MessageStateScheduled || m.ScheduledEnqueueTime == nil || !m.ScheduledEnqueueTime.Equal(later) {
			t.Errorf("%s: State %v, ScheduledEnqueueTime %v, want scheduled at %v", id, m.State, m.ScheduledEnqueueTime, later)
		}
	}
	if *byID["later-1"].SequenceNumber != seqs[0] {
		t.Errorf("peeked sequence number %d, ScheduleMessages said %d", *byID["later-1"].SequenceNumber, seqs[0])
	}

	if err := s.CancelScheduledMessages(ctx, []int64{seqs[0]}, nil); err != nil {
		t.Fatalf("CancelScheduledMessages: %v", err)
	}
	// The one due soon arrives by itself; it is the only one that does.
	got, err := r.ReceiveMessages(ctx, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Activation gives the message a new sequence number (sbemu follows Service Bus here), so
	// only the id is compared.
	if len(got) != 1 || got[0].MessageID != "soon" {
		for _, m := range got {
			t.Logf("received %q", m.MessageID)
		}
		t.Fatalf("received %d messages, want only 'soon'", len(got))
	}
	if got[0].EnqueuedTime == nil || got[0].EnqueuedTime.Before(soon.Add(-time.Second)) {
		t.Errorf("'soon' enqueued at %v, scheduled for %v", got[0].EnqueuedTime, soon)
	}
	if err := r.CompleteMessage(ctx, got[0], nil); err != nil {
		t.Fatal(err)
	}
	peeked, err = r.PeekMessages(ctx, 10, &azservicebus.PeekMessagesOptions{FromSequenceNumber: harness.Ptr(int64(1))})
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, m := range peeked {
		ids = append(ids, m.MessageID)
	}
	if !reflect.DeepEqual(ids, []string{"later-2", "by-property"}) {
		t.Errorf("after the cancel and the receive, peek shows %v, want [later-2 by-property]", ids)
	}
}

// A message of exactly the emulator's max-message-size (the default 256 KiB, more than one
// transfer frame) is accepted and comes back whole; one byte more is ErrMessageTooLarge.
func TestMessageAtDefaultLimit(t *testing.T) {
	e := harness.Get(t)
	c := e.Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	s := sender(t, c, "atlimit")
	body := harness.BodyForEncodedSize(t, defaultMaxMessageSize, "atlimit-1")
	if err := s.SendMessage(ctx, &azservicebus.Message{Body: body, MessageID: harness.Ptr("atlimit-1")}, nil); err != nil {
		t.Fatalf("SendMessage of an encoded %d bytes: %v", defaultMaxMessageSize, err)
	}
	over := append(append([]byte{}, body...), 'x')
	if err := s.SendMessage(ctx, &azservicebus.Message{Body: over, MessageID: harness.Ptr("atlimit-1")}, nil); !errors.Is(err, azservicebus.ErrMessageTooLarge) {
		t.Fatalf("SendMessage one byte over: %v, want ErrMessageTooLarge", err)
	}
	got := receiveAll(t, c, "atlimit", 1)[0]
	if !bytes.Equal(got.Body, body) {
		t.Fatalf("body of %d bytes came back as %d bytes", len(body), len(got.Body))
	}
}
