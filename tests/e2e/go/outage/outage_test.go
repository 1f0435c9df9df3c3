// Server busy: PostgreSQL is taken away under the Go SDK (the embedded cluster's data dir moved
// aside and its postmaster killed, as tests/e2e/js/pg_outage.test.js does). sbemu answers
// com.microsoft:server-busy meanwhile, which azservicebus retries (RecoveryKindNone); a send
// started during the outage with the SDK's retries gets through once the database is back, and
// nothing acknowledged before is lost.
package outage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"
	"sbemu/tests/e2e/go/internal/harness"
)

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Name: "outage", Queues: []harness.Queue{{Name: "outage"}}})
}

func TestSendRetriedThroughOutage(t *testing.T) {
	e := harness.Get(t)
	ctx := harness.Ctx(t, 120*time.Second)
	c := e.Client(t, nil)
	s, err := c.NewSender("outage", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := s.SendMessage(ctx, &azservicebus.Message{Body: []byte("before"), MessageID: harness.Ptr(fmt.Sprint("before-", i))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Keep the cluster from starting again (as a vanished volume would), then kill it.
	data := filepath.Join(e.DataDir, "pg", "data")
	pid := e.PostmasterPid()
	if pid == 0 {
		t.Fatal("no postmaster.pid")
	}
	if err := os.Rename(data, data+".away"); err != nil {
		t.Fatal(err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			if err := os.Rename(data+".away", data); err != nil {
				t.Errorf("restoring the data dir: %v", err)
			}
		}
	}
	t.Cleanup(restore)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(t, 10*time.Second, "the postmaster is gone", func() (bool, error) { return !harness.Alive(pid), nil })
	if err := e.WaitHealth(503, 15*time.Second); err != nil {
		t.Fatal(err)
	}

	// Without retries the SDK hands back the server-busy refusal itself.
	noRetry := e.Client(t, &azservicebus.ClientOptions{RetryOptions: azservicebus.RetryOptions{MaxRetries: -1}})
	s0, _ := noRetry.NewSender("outage", nil)
	err = s0.SendMessage(ctx, &azservicebus.Message{Body: []byte("during")}, nil)
	var amqpErr *amqp.Error
	if !errors.As(err, &amqpErr) || amqpErr.Condition != "com.microsoft:server-busy" || !strings.Contains(strings.ToLower(amqpErr.Description), "database") {
		t.Fatalf("a send without retries during the outage: %v, want com.microsoft:server-busy naming the database", err)
	}

	// With retries (the SDK's backoff, shortened): started during the outage, done after it.
	retrying := e.Client(t, &azservicebus.ClientOptions{RetryOptions: azservicebus.RetryOptions{
		MaxRetries: 30, RetryDelay: 300 * time.Millisecond, MaxRetryDelay: time.Second}})
	sr, _ := retrying.NewSender("outage", nil)
	done := make(chan error, 1)
	go func() {
		done <- sr.SendMessage(ctx, &azservicebus.Message{Body: []byte("retried"), MessageID: harness.Ptr("retried")}, nil)
	}()
	time.Sleep(1500 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the retried send ended while PostgreSQL was away: %v", err)
	default:
	}
	restore()
	if err := e.WaitHealth(200, 40*time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the retried send: %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("the retried send did not finish 40 s after the database came back")
	}
	if newPid := e.PostmasterPid(); newPid == 0 || newPid == pid || !harness.Alive(newPid) {
		t.Errorf("sbemu did not start a new postmaster (old %d, now %d)", pid, newPid)
	}
	// Everything acknowledged is there, once.
	r, _ := c.NewReceiverForQueue("outage", nil)
	seen := map[string]int{}
	for len(seen) < 6 {
		msgs, err := r.ReceiveMessages(ctx, 10, nil)
		if err != nil {
			t.Fatalf("ReceiveMessages after the outage (have %v): %v", seen, err)
		}
		for _, m := range msgs {
			seen[m.MessageID]++
			if err := r.CompleteMessage(ctx, m, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, id := range []string{"before-0", "before-1", "before-2", "before-3", "before-4", "retried"} {
		if seen[id] != 1 {
			t.Errorf("%s received %d times", id, seen[id])
		}
	}
}
