// Topics and subscriptions with the Go SDK: fan-out to every subscription, SQL filters (with
// parameters and actions) and correlation filters made with the admin client's CreateRule and
// from Config.json, receivers on subscriptions and their dead-letter subqueues, a session
// subscription (AcceptSessionForSubscription, the ListSessions pager).
package topics

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"sbemu/tests/e2e/go/internal/harness"
)

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Name: "topics", Topics: []harness.Topic{
		{Name: "fanout", Subscriptions: []harness.Subscription{{Name: "a"}, {Name: "b"}, {Name: "c"}}},
		{Name: "orders", Subscriptions: []harness.Subscription{{Name: "all"}}},
		{Name: "configrules", Subscriptions: []harness.Subscription{
			{Name: "sqlsub", Rules: []harness.Rule{{Name: "big", Properties: harness.Props{
				"FilterType": "Sql", "SqlFilter": map[string]any{"SqlExpression": "amount > 100"}}}}},
			{Name: "corrsub", Rules: []harness.Rule{{Name: "eu", Properties: harness.Props{
				"FilterType": "Correlation", "CorrelationFilter": map[string]any{"Label": "invoice", "Properties": map[string]any{"region": "eu"}}}}}},
		}},
		{Name: "sessiontopic", Subscriptions: []harness.Subscription{{Name: "ss", Properties: harness.Props{"RequiresSession": true}}}},
	}})
}

func publish(t *testing.T, c *azservicebus.Client, topic string, msgs ...*azservicebus.Message) {
	t.Helper()
	s, err := c.NewSender(topic, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := harness.Ctx(t, 30*time.Second)
	for _, m := range msgs {
		if err := s.SendMessage(ctx, m, nil); err != nil {
			t.Fatalf("SendMessage to %s: %v", topic, err)
		}
	}
}

// drain receives what a subscription holds (completing it) until it stays empty for a moment.
func drain(t *testing.T, c *azservicebus.Client, topic, sub string) []*azservicebus.ReceivedMessage {
	t.Helper()
	r, err := c.NewReceiverForSubscription(topic, sub, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(harness.Ctx(t, 5*time.Second))
	var out []*azservicebus.ReceivedMessage
	for {
		ctx := harness.Ctx(t, 1500*time.Millisecond)
		msgs, err := r.ReceiveMessages(ctx, 20, nil)
		if len(msgs) == 0 {
			if err != nil && ctx.Err() == nil {
				t.Fatalf("ReceiveMessages from %s/%s: %v", topic, sub, err)
			}
			return out
		}
		for _, m := range msgs {
			if err := r.CompleteMessage(harness.Ctx(t, 10*time.Second), m, nil); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, msgs...)
	}
}

func ids(ms []*azservicebus.ReceivedMessage) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.MessageID)
	}
	sort.Strings(out)
	return fmt.Sprint(out)
}

func msg(id string, props map[string]any) *azservicebus.Message {
	return &azservicebus.Message{Body: []byte(id), MessageID: harness.Ptr(id), ApplicationProperties: props}
}

func TestFanOut(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	publish(t, c, "fanout", msg("f1", nil), msg("f2", nil))
	for _, sub := range []string{"a", "b", "c"} {
		got := drain(t, c, "fanout", sub)
		if ids(got) != "[f1 f2]" {
			t.Errorf("subscription %s: %s", sub, ids(got))
		}
		for _, m := range got {
			if m.SequenceNumber == nil || m.EnqueuedTime == nil {
				t.Errorf("%s/%s: no sequence number or enqueued time", sub, m.MessageID)
			}
		}
	}
}

func TestRulesFromConfig(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	publish(t, c, "configrules",
		msg("small", map[string]any{"amount": int64(5)}),
		msg("big", map[string]any{"amount": int64(500)}),
		&azservicebus.Message{Body: []byte("x"), MessageID: harness.Ptr("eu-invoice"), Subject: harness.Ptr("invoice"), ApplicationProperties: map[string]any{"region": "eu"}},
		&azservicebus.Message{Body: []byte("x"), MessageID: harness.Ptr("us-invoice"), Subject: harness.Ptr("invoice"), ApplicationProperties: map[string]any{"region": "us"}},
	)
	if got := ids(drain(t, c, "configrules", "sqlsub")); got != "[big]" {
		t.Errorf("sqlsub: %s", got)
	}
	if got := ids(drain(t, c, "configrules", "corrsub")); got != "[eu-invoice]" {
		t.Errorf("corrsub: %s", got)
	}
}

// Rules made with the admin client take effect for the next send: the $Default rule removed,
// a SQL rule with a parameter and an action, a correlation rule on system and application
// properties.
func TestRulesFromAdminClient(t *testing.T) {
	e := harness.Get(t)
	c := e.Client(t, nil)
	ac := e.AdminClient(t)
	ctx := harness.Ctx(t, 60*time.Second)
	if _, err := ac.CreateSubscription(ctx, "orders", "filtered", nil); err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}
	if _, err := ac.DeleteRule(ctx, "orders", "filtered", "$Default", nil); err != nil {
		t.Fatalf("DeleteRule $Default: %v", err)
	}
	if _, err := ac.CreateRule(ctx, "orders", "filtered", &admin.CreateRuleOptions{
		Name:   harness.Ptr("priority"),
		Filter: &admin.SQLFilter{Expression: "priority >= @p AND sys.ContentType = 'application/json'", Parameters: map[string]any{"@p": int64(3)}},
		Action: &admin.SQLAction{Expression: "SET routed = 'priority'; SET priority = priority + 100"},
	}); err != nil {
		t.Fatalf("CreateRule sql: %v", err)
	}
	if _, err := ac.CreateRule(ctx, "orders", "filtered", &admin.CreateRuleOptions{
		Name:   harness.Ptr("corr"),
		Filter: &admin.CorrelationFilter{CorrelationID: harness.Ptr("order-7"), To: harness.Ptr("warehouse"), ApplicationProperties: map[string]any{"kind": "express"}},
	}); err != nil {
		t.Fatalf("CreateRule correlation: %v", err)
	}
	json := harness.Ptr("application/json")
	publish(t, c, "orders",
		&azservicebus.Message{Body: []byte("{}"), MessageID: harness.Ptr("high"), ContentType: json, ApplicationProperties: map[string]any{"priority": int64(5)}},
		&azservicebus.Message{Body: []byte("{}"), MessageID: harness.Ptr("low"), ContentType: json, ApplicationProperties: map[string]any{"priority": int64(1)}},
		&azservicebus.Message{Body: []byte("x"), MessageID: harness.Ptr("corr-match"), CorrelationID: harness.Ptr("order-7"), To: harness.Ptr("warehouse"), ApplicationProperties: map[string]any{"kind": "express"}},
		&azservicebus.Message{Body: []byte("x"), MessageID: harness.Ptr("corr-miss"), CorrelationID: harness.Ptr("order-7"), To: harness.Ptr("warehouse"), ApplicationProperties: map[string]any{"kind": "slow"}},
	)
	got := drain(t, c, "orders", "filtered")
	if ids(got) != "[corr-match high]" {
		t.Fatalf("filtered: %s", ids(got))
	}
	for _, m := range got {
		if m.MessageID == "high" && (m.ApplicationProperties["routed"] != "priority" || m.ApplicationProperties["priority"] != int64(105)) {
			t.Errorf("the rule action did not run: %v", m.ApplicationProperties)
		}
	}
	if got := ids(drain(t, c, "orders", "all")); got != "[corr-match corr-miss high low]" {
		t.Errorf("all: %s", got)
	}
	// Removing the SQL rule: the next high-priority order no longer matches.
	if _, err := ac.DeleteRule(ctx, "orders", "filtered", "priority", nil); err != nil {
		t.Fatal(err)
	}
	publish(t, c, "orders", &azservicebus.Message{Body: []byte("{}"), MessageID: harness.Ptr("high-2"), ContentType: json, ApplicationProperties: map[string]any{"priority": int64(9)}})
	if got := ids(drain(t, c, "orders", "filtered")); got != "[]" {
		t.Errorf("after DeleteRule: %s", got)
	}
	drain(t, c, "orders", "all")
}

func TestSubscriptionDeadLetter(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	publish(t, c, "fanout", msg("to-dlq", nil))
	r, err := c.NewReceiverForSubscription("fanout", "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := r.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("ReceiveMessages: %v", err)
	}
	if err := r.DeadLetterMessage(ctx, msgs[0], &azservicebus.DeadLetterOptions{Reason: harness.Ptr("sub-reason")}); err != nil {
		t.Fatal(err)
	}
	dlq, err := c.NewReceiverForSubscription("fanout", "a", &azservicebus.ReceiverOptions{SubQueue: azservicebus.SubQueueDeadLetter})
	if err != nil {
		t.Fatal(err)
	}
	d, err := dlq.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(d) != 1 || d[0].MessageID != "to-dlq" || d[0].DeadLetterReason == nil || *d[0].DeadLetterReason != "sub-reason" {
		t.Fatalf("subscription dead-letter queue: %v %v", d, err)
	}
	if err := dlq.CompleteMessage(ctx, d[0], nil); err != nil {
		t.Fatal(err)
	}
	drain(t, c, "fanout", "b")
	drain(t, c, "fanout", "c")
}

func TestSessionSubscription(t *testing.T) {
	c := harness.Get(t).Client(t, nil)
	ctx := harness.Ctx(t, 30*time.Second)
	for _, sid := range []string{"alpha", "beta"} {
		publish(t, c, "sessiontopic", &azservicebus.Message{Body: []byte(sid), MessageID: harness.Ptr(sid + "-1"), SessionID: harness.Ptr(sid)})
	}
	var sessions []string
	pager := c.NewListSessionsForSubscriptionPager("sessiontopic", "ss", nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("ListSessions: %v", err)
		}
		sessions = append(sessions, page.Sessions...)
	}
	sort.Strings(sessions)
	if fmt.Sprint(sessions) != "[alpha beta]" {
		t.Errorf("ListSessions: %v", sessions)
	}
	r, err := c.AcceptSessionForSubscription(ctx, "sessiontopic", "ss", "beta", nil)
	if err != nil {
		t.Fatalf("AcceptSessionForSubscription: %v", err)
	}
	defer r.Close(ctx)
	got, err := r.ReceiveMessages(ctx, 1, nil)
	if err != nil || len(got) != 1 || got[0].MessageID != "beta-1" {
		t.Fatalf("beta: %v %v", got, err)
	}
	if err := r.CompleteMessage(ctx, got[0], nil); err != nil {
		t.Fatal(err)
	}
	n, err := c.AcceptNextSessionForSubscription(ctx, "sessiontopic", "ss", nil)
	if err != nil {
		t.Fatalf("AcceptNextSessionForSubscription: %v", err)
	}
	defer n.Close(ctx)
	if n.SessionID() != "alpha" {
		t.Fatalf("next session %q", n.SessionID())
	}
}
