// Sessions with the Go SDK: AcceptSessionForQueue by id, AcceptNextSessionForQueue (and its
// CodeTimeout when no session is free), messages in order within a session, Get/SetSessionState,
// RenewSessionLock, and the session-cannot-be-locked error of a second accept.
package sessions

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"
	"sbemu/tests/e2e/go/internal/harness"
)

func TestMain(m *testing.M) {
	rs := harness.Props{"RequiresSession": true}
	harness.Main(m, harness.Options{Name: "sessions", Queues: []harness.Queue{
		{Name: "byid", Properties: rs}, {Name: "next", Properties: rs}, {Name: "state", Properties: rs},
		{Name: "locked", Properties: rs}, {Name: "empty", Properties: rs},
		{Name: "renew", Properties: harness.Props{"RequiresSession": true, "LockDuration": "PT5S"}},
	}})
}

func sendTo(t *testing.T, c *azservicebus.Client, q, session string, ids ...string) {
	t.Helper()
	s, err := c.NewSender(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := harness.Ctx(t, 30*time.Second)
	for _, id := range ids {
		if err := s.SendMessage(ctx, &azservicebus.Message{Body: []byte(id), MessageID: harness.Ptr(id), SessionID: harness.Ptr(session)}, nil); err != nil {
			t.Fatalf("SendMessage %s to session %s: %v", id, session, err)
		}
	}
}

func receiveIDs(t *testing.T, r *azservicebus.SessionReceiver, n int) []string {
	t.Helper()
	ctx := harness.Ctx(t, 20*time.Second)
	var ids []string
	for len(ids) < n {
		msgs, err := r.ReceiveMessages(ctx, n-len(ids), nil)
		if err != nil {
			t.Fatalf("ReceiveMessages after %v: %v", ids, err)
		}
		for _, m := range msgs {
			if m.SessionID == nil || *m.SessionID != r.SessionID() {
				t.Errorf("%s: SessionID %v in session %s", m.MessageID, m.SessionID, r.SessionID())
			}
			ids = append(ids, m.MessageID)
			if err := r.CompleteMessage(ctx, m, nil); err != nil {
				t.Fatalf("CompleteMessage: %v", err)
			}
		}
	}
	return ids
}

func closeLater(t *testing.T, r *azservicebus.SessionReceiver) {
	t.Cleanup(func() { _ = r.Close(harness.Ctx(t, 10*time.Second)) })
}

func TestAcceptSessionByID(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	sendTo(t, c, "byid", "s1", "s1-a", "s1-b", "s1-c")
	sendTo(t, c, "byid", "s2", "s2-a")
	sendTo(t, c, "byid", "s1", "s1-d")
	ctx := harness.Ctx(t, 20*time.Second)
	r, err := c.AcceptSessionForQueue(ctx, "byid", "s1", nil)
	if err != nil {
		t.Fatalf("AcceptSessionForQueue: %v", err)
	}
	closeLater(t, r)
	if r.SessionID() != "s1" {
		t.Fatalf("SessionID() = %q", r.SessionID())
	}
	if d := time.Until(r.LockedUntil()); d < 30*time.Second || d > 70*time.Second {
		t.Errorf("LockedUntil is %v away (LockDuration PT1M)", d)
	}
	if got := fmt.Sprint(receiveIDs(t, r, 4)); got != "[s1-a s1-b s1-c s1-d]" {
		t.Fatalf("session s1 gave %s", got)
	}
	// Nothing of s2 comes through this receiver.
	short := harness.Ctx(t, 1500*time.Millisecond)
	if msgs, err := r.ReceiveMessages(short, 5, nil); len(msgs) != 0 {
		t.Fatalf("more from s1: %d (%v)", len(msgs), err)
	}
	// A session receiver's peek: the Go SDK sends no session-id (only associated-link-name), so
	// the emulator peeks the queue; s2's message is what is left.
	peeked, err := r.PeekMessages(ctx, 10, &azservicebus.PeekMessagesOptions{FromSequenceNumber: harness.Ptr(int64(0))})
	if err != nil || len(peeked) != 1 || peeked[0].MessageID != "s2-a" {
		t.Fatalf("peek from the s1 receiver: %d, %v", len(peeked), err)
	}
	r2, err := c.AcceptSessionForQueue(ctx, "byid", "s2", &azservicebus.SessionReceiverOptions{ReceiveMode: azservicebus.ReceiveModeReceiveAndDelete})
	if err != nil {
		t.Fatalf("AcceptSessionForQueue s2: %v", err)
	}
	closeLater(t, r2)
	msgs, err := r2.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 || msgs[0].MessageID != "s2-a" {
		t.Fatalf("s2 in receive-and-delete: %d, %v", len(msgs), err)
	}
}

func TestAcceptNextSession(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	sendTo(t, c, "next", "first", "f1", "f2")
	sendTo(t, c, "next", "second", "x1")
	ctx := harness.Ctx(t, 20*time.Second)
	r, err := c.AcceptNextSessionForQueue(ctx, "next", nil)
	if err != nil {
		t.Fatalf("AcceptNextSessionForQueue: %v", err)
	}
	closeLater(t, r)
	if r.SessionID() != "first" {
		t.Fatalf("the next session is %q, want the oldest, 'first'", r.SessionID())
	}
	if got := fmt.Sprint(receiveIDs(t, r, 2)); got != "[f1 f2]" {
		t.Fatalf("first gave %s", got)
	}
	// 'first' is still held by r: the next free one is 'second'.
	r2, err := c.AcceptNextSessionForQueue(ctx, "next", nil)
	if err != nil {
		t.Fatalf("second AcceptNextSessionForQueue: %v", err)
	}
	closeLater(t, r2)
	if r2.SessionID() != "second" {
		t.Fatalf("next session %q, want 'second'", r2.SessionID())
	}
	if got := fmt.Sprint(receiveIDs(t, r2, 1)); got != "[x1]" {
		t.Fatalf("second gave %s", got)
	}
}

// No session with messages: the SDK sends com.microsoft:timeout from the context's deadline and
// the emulator answers com.microsoft:timeout when it passes, which the SDK calls CodeTimeout.
func TestAcceptNextSessionTimeout(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 3*time.Second)
	start := time.Now()
	r, err := c.AcceptNextSessionForQueue(ctx, "empty", nil)
	if err == nil {
		_ = r.Close(harness.Ctx(t, 5*time.Second))
		t.Fatalf("AcceptNextSessionForQueue on an empty queue gave session %q", r.SessionID())
	}
	if harness.Code(err) != azservicebus.CodeTimeout {
		t.Fatalf("AcceptNextSessionForQueue on an empty queue: %v (after %v), want CodeTimeout", err, time.Since(start))
	}
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("timed out after %v, the deadline was 3 s", d)
	}
}

func TestSessionState(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	sendTo(t, c, "state", "st", "st-1")
	ctx := harness.Ctx(t, 20*time.Second)
	r, err := c.AcceptSessionForQueue(ctx, "state", "st", nil)
	if err != nil {
		t.Fatal(err)
	}
	state, err := r.GetSessionState(ctx, nil)
	if err != nil {
		t.Fatalf("GetSessionState: %v", err)
	}
	if state != nil {
		t.Fatalf("a new session's state: %q, want nil", state)
	}
	want := []byte{0, 1, 2, 'g', 'o', 0xff}
	if err := r.SetSessionState(ctx, want, nil); err != nil {
		t.Fatalf("SetSessionState: %v", err)
	}
	if got, err := r.GetSessionState(ctx, nil); err != nil || string(got) != string(want) {
		t.Fatalf("GetSessionState: %v, %v", got, err)
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// Kept across receivers.
	r2, err := c.AcceptSessionForQueue(ctx, "state", "st", nil)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, r2)
	if got, err := r2.GetSessionState(ctx, nil); err != nil || string(got) != string(want) {
		t.Fatalf("GetSessionState from the next receiver: %v, %v", got, err)
	}
	// SetSessionState(nil) sends an empty binary (go-amqp encodes a nil []byte so).
	if err := r2.SetSessionState(ctx, nil, nil); err != nil {
		t.Fatalf("SetSessionState(nil): %v", err)
	}
	if got, err := r2.GetSessionState(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("state after clearing: %v, %v", got, err)
	}
	if got := fmt.Sprint(receiveIDs(t, r2, 1)); got != "[st-1]" {
		t.Fatalf("got %s", got)
	}
}

func TestRenewSessionLock(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	sendTo(t, c, "renew", "rn", "rn-1", "rn-2")
	ctx := harness.Ctx(t, 30*time.Second)
	r, err := c.AcceptSessionForQueue(ctx, "renew", "rn", nil)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, r)
	first := r.LockedUntil()
	if d := time.Until(first); d <= 0 || d > 7*time.Second {
		t.Fatalf("LockedUntil %v away, LockDuration PT5S", d)
	}
	// Held 7 s in all (past the first lock) by renewing twice.
	for i := 0; i < 2; i++ {
		time.Sleep(3 * time.Second)
		if err := r.RenewSessionLock(ctx, nil); err != nil {
			t.Fatalf("RenewSessionLock %d: %v", i, err)
		}
	}
	if !r.LockedUntil().After(first.Add(5 * time.Second)) {
		t.Errorf("LockedUntil went from %v to %v", first, r.LockedUntil())
	}
	time.Sleep(time.Second)
	if got := fmt.Sprint(receiveIDs(t, r, 2)); got != "[rn-1 rn-2]" {
		t.Fatalf("after renewals: %s", got)
	}
}

// A session held by one receiver cannot be accepted by another: the emulator detaches the
// second link with com.microsoft:session-cannot-be-locked, which the SDK returns as it is (an
// *amqp.Error; azservicebus has no Code for it) without retrying.
func TestSessionCannotBeLocked(t *testing.T) {
	e := harness.Get(t)
	c := e.Client(t, nil)
	sendTo(t, c, "locked", "busy", "b1")
	ctx := harness.Ctx(t, 20*time.Second)
	r, err := c.AcceptSessionForQueue(ctx, "locked", "busy", nil)
	if err != nil {
		t.Fatal(err)
	}
	closeLater(t, r)
	other := e.Client(t, nil) // another connection, as another process would have
	start := time.Now()
	r2, err := other.AcceptSessionForQueue(ctx, "locked", "busy", nil)
	if err == nil {
		_ = r2.Close(ctx)
		t.Fatal("a second AcceptSessionForQueue of a held session succeeded")
	}
	var amqpErr *amqp.Error
	if !errors.As(err, &amqpErr) || amqpErr.Condition != "com.microsoft:session-cannot-be-locked" {
		t.Fatalf("second accept: %v (%T), want com.microsoft:session-cannot-be-locked", err, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the refusal took %v (retried?)", d)
	}
	// Once the holder lets go, it can be accepted.
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 10*time.Second, "accept after the holder closed", func() (bool, error) {
		r3, err := other.AcceptSessionForQueue(ctx, "locked", "busy", nil)
		if err != nil {
			return false, err
		}
		defer r3.Close(ctx)
		ids := receiveIDs(t, r3, 1)
		return fmt.Sprint(ids) == "[b1]", fmt.Errorf("got %v", ids)
	})
}
