// The Go SDK's admin.Client (the ATOM management API) on the emulator connection string: it
// dials https://localhost:<amqp-port>/ whatever UseDevelopmentEmulator says, so the tests trust
// sbemu's certificate in the client's transport (see harness.AdminClient). Create, get, update,
// delete and list (pagers) queues, topics, subscriptions and rules; runtime properties;
// namespace properties; entities made here used over AMQP at once.
package admin_test

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus/admin"
	"sbemu/tests/e2e/go/internal/harness"
)

func TestMain(m *testing.M) {
	harness.Main(m, harness.Options{Name: "admin", Queues: []harness.Queue{{Name: "fromconfig"}},
		Topics: []harness.Topic{{Name: "configtopic", Subscriptions: []harness.Subscription{{Name: "configsub"}}}}})
}

// recorder is an http.RoundTripper that notes what the admin client sends.
type recorder struct {
	next http.RoundTripper
	reqs []*http.Request
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.reqs = append(r.reqs, req)
	return r.next.RoundTrip(req)
}

// Also how the admin client dials with the emulator connection string: https (TLS) to the
// Endpoint's host and port, which is sbemu's AMQP port, api-version 2024-05, a SAS token.
func TestNamespaceProperties(t *testing.T) {
	e := harness.Get(t)
	rec := &recorder{next: &http.Transport{TLSClientConfig: e.TLSConfig(t)}}
	ac, err := admin.NewClientFromConnectionString(e.ConnectionString(), &admin.ClientOptions{
		ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: rec}}})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := ac.GetNamespaceProperties(harness.Ctx(t, 30*time.Second), nil)
	if err != nil {
		t.Fatalf("GetNamespaceProperties: %v", err)
	}
	if ns.Name != "sbemulatorns" || ns.SKU != "Standard" || ns.CreatedTime.IsZero() {
		t.Fatalf("namespace: %+v", ns.NamespaceProperties)
	}
	if len(rec.reqs) != 1 {
		t.Fatalf("%d requests", len(rec.reqs))
	}
	u := rec.reqs[0].URL
	if u.Scheme != "https" || u.Host != fmt.Sprintf("localhost:%d", e.AMQPPort) || u.Path != "/$namespaceinfo" ||
		u.Query().Get("api-version") != "2024-05" {
		t.Errorf("the admin client asked for %s", u)
	}
	if a := rec.reqs[0].Header.Get("Authorization"); !strings.HasPrefix(a, "SharedAccessSignature ") {
		t.Errorf("Authorization: %q", a)
	}
	// Without the certificate trusted, what a user sees first.
	plain, _ := admin.NewClientFromConnectionString(e.ConnectionString(), &admin.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if _, err := plain.GetNamespaceProperties(harness.Ctx(t, 30*time.Second), nil); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("with the system roots only: %v, want a certificate error", err)
	}
}

func TestQueueLifecycle(t *testing.T) {
	e := harness.Get(t)
	ac := e.AdminClient(t)
	ctx := harness.Ctx(t, 60*time.Second)
	created, err := ac.CreateQueue(ctx, "adminq", &admin.CreateQueueOptions{Properties: &admin.QueueProperties{
		LockDuration:                     harness.Ptr("PT45S"),
		MaxDeliveryCount:                 harness.Ptr(int32(7)),
		DefaultMessageTimeToLive:         harness.Ptr("PT2H"),
		DeadLetteringOnMessageExpiration: harness.Ptr(true),
		MaxSizeInMegabytes:               harness.Ptr(int32(2048)),
		UserMetadata:                     harness.Ptr("made by go"),
	}})
	if err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	if created.QueueName != "adminq" || deref(created.LockDuration) != "PT45S" || *created.MaxDeliveryCount != 7 {
		t.Fatalf("created: %s %v %v", created.QueueName, deref(created.LockDuration), created.MaxDeliveryCount)
	}
	// A second create is a conflict.
	_, err = ac.CreateQueue(ctx, "adminq", nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusConflict {
		t.Errorf("second CreateQueue: %v, want 409", err)
	}
	got, err := ac.GetQueue(ctx, "adminq", nil)
	if err != nil || got == nil {
		t.Fatalf("GetQueue: %v, %v", got, err)
	}
	if deref(got.DefaultMessageTimeToLive) != "PT2H" || !*got.DeadLetteringOnMessageExpiration || deref(got.UserMetadata) != "made by go" ||
		*got.MaxSizeInMegabytes != 2048 || *got.Status != admin.EntityStatusActive || *got.RequiresSession {
		t.Errorf("GetQueue: %+v", got.QueueProperties)
	}
	// Usable over AMQP at once.
	c := e.Client(t, nil)
	s, _ := c.NewSender("adminq", nil)
	for i := 0; i < 3; i++ {
		if err := s.SendMessage(ctx, &azservicebus.Message{Body: []byte("x")}, nil); err != nil {
			t.Fatalf("SendMessage to a queue made by admin: %v", err)
		}
	}
	rt, err := ac.GetQueueRuntimeProperties(ctx, "adminq", nil)
	if err != nil || rt == nil {
		t.Fatalf("GetQueueRuntimeProperties: %v", err)
	}
	if rt.ActiveMessageCount != 3 || rt.TotalMessageCount != 3 || rt.SizeInBytes <= 0 || rt.CreatedAt.IsZero() {
		t.Errorf("runtime: %+v", rt.QueueRuntimeProperties)
	}
	// Update: change what may change, keep the rest.
	props := got.QueueProperties
	props.MaxDeliveryCount = harness.Ptr(int32(3))
	props.LockDuration = harness.Ptr("PT10S")
	props.Status = harness.Ptr(admin.EntityStatusSendDisabled)
	updated, err := ac.UpdateQueue(ctx, "adminq", props, nil)
	if err != nil {
		t.Fatalf("UpdateQueue: %v", err)
	}
	if *updated.MaxDeliveryCount != 3 || deref(updated.LockDuration) != "PT10S" || *updated.Status != admin.EntityStatusSendDisabled {
		t.Errorf("updated: %+v", updated.QueueProperties)
	}
	// The change reaches AMQP: a new send is refused.
	harness.Eventually(t, 10*time.Second, "send refused on a SendDisabled queue", func() (bool, error) {
		s2, _ := c.NewSender("adminq", nil)
		defer s2.Close(ctx)
		err := s2.SendMessage(ctx, &azservicebus.Message{Body: []byte("refused")}, nil)
		return err != nil, err
	})
	// RequiresSession of an existing queue cannot change (400), as in Service Bus.
	props.RequiresSession = harness.Ptr(true)
	if _, err := ac.UpdateQueue(ctx, "adminq", props, nil); !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest {
		t.Errorf("UpdateQueue RequiresSession: %v, want 400", err)
	}
	if _, err := ac.DeleteQueue(ctx, "adminq", nil); err != nil {
		t.Fatalf("DeleteQueue: %v", err)
	}
	if q, err := ac.GetQueue(ctx, "adminq", nil); err != nil || q != nil {
		t.Fatalf("GetQueue after delete: %v, %v (the SDK answers nil, nil for a missing entity)", q, err)
	}
	if rt, err := ac.GetQueueRuntimeProperties(ctx, "adminq", nil); err != nil || rt != nil {
		t.Fatalf("GetQueueRuntimeProperties after delete: %v, %v", rt, err)
	}
	if _, err := ac.DeleteQueue(ctx, "adminq", nil); !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
		t.Errorf("second DeleteQueue: %v, want 404", err)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// Pagers: more queues than a page, listed with MaxPageSize so the SDK follows the feed's
// next links ($skip/$top).
func TestListPagers(t *testing.T) {
	e := harness.Get(t)
	ac := e.AdminClient(t)
	ctx := harness.Ctx(t, 90*time.Second)
	want := []string{"fromconfig"}
	for i := 0; i < 7; i++ {
		name := fmt.Sprintf("list-%d", i)
		if _, err := ac.CreateQueue(ctx, name, nil); err != nil {
			t.Fatalf("CreateQueue %s: %v", name, err)
		}
		want = append(want, name)
	}
	sort.Strings(want)
	var names []string
	pages := 0
	pager := ac.NewListQueuesPager(&admin.ListQueuesOptions{MaxPageSize: 3})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("NextPage: %v", err)
		}
		pages++
		if len(page.Queues) > 3 {
			t.Errorf("page of %d with MaxPageSize 3", len(page.Queues))
		}
		for _, q := range page.Queues {
			names = append(names, q.QueueName)
		}
	}
	sort.Strings(names)
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("listed %v, want %v", names, want)
	}
	if pages < 3 {
		t.Errorf("%d pages for %d queues at 3 a page", pages, len(want))
	}
	var rtNames []string
	rtPager := ac.NewListQueuesRuntimePropertiesPager(&admin.ListQueuesRuntimePropertiesOptions{MaxPageSize: 4})
	for rtPager.More() {
		page, err := rtPager.NextPage(ctx)
		if err != nil {
			t.Fatalf("runtime NextPage: %v", err)
		}
		for _, q := range page.QueueRuntimeProperties {
			rtNames = append(rtNames, q.QueueName)
			if q.CreatedAt.IsZero() {
				t.Errorf("%s: no CreatedAt", q.QueueName)
			}
		}
	}
	sort.Strings(rtNames)
	if fmt.Sprint(rtNames) != fmt.Sprint(want) {
		t.Fatalf("runtime listed %v", rtNames)
	}
	for i := 0; i < 7; i++ {
		if _, err := ac.DeleteQueue(ctx, fmt.Sprintf("list-%d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTopicSubscriptionRuleLifecycle(t *testing.T) {
	e := harness.Get(t)
	ac := e.AdminClient(t)
	ctx := harness.Ctx(t, 90*time.Second)
	if _, err := ac.CreateTopic(ctx, "admint", &admin.CreateTopicOptions{Properties: &admin.TopicProperties{
		DefaultMessageTimeToLive: harness.Ptr("PT3H"), RequiresDuplicateDetection: harness.Ptr(true),
	}}); err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	topic, err := ac.GetTopic(ctx, "admint", nil)
	if err != nil || topic == nil || deref(topic.DefaultMessageTimeToLive) != "PT3H" || !*topic.RequiresDuplicateDetection {
		t.Fatalf("GetTopic: %v, %v", topic, err)
	}
	tp := topic.TopicProperties
	tp.UserMetadata = harness.Ptr("topic metadata")
	if u, err := ac.UpdateTopic(ctx, "admint", tp, nil); err != nil || deref(u.UserMetadata) != "topic metadata" {
		t.Fatalf("UpdateTopic: %v", err)
	}
	// A subscription made with a rule of its own instead of $Default.
	if _, err := ac.CreateSubscription(ctx, "admint", "s1", &admin.CreateSubscriptionOptions{Properties: &admin.SubscriptionProperties{
		MaxDeliveryCount: harness.Ptr(int32(4)),
		DefaultRule:      &admin.RuleProperties{Name: "firstrule", Filter: &admin.SQLFilter{Expression: "color = 'red'"}},
	}}); err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}
	if _, err := ac.CreateSubscription(ctx, "admint", "s2", nil); err != nil {
		t.Fatalf("CreateSubscription s2: %v", err)
	}
	sub, err := ac.GetSubscription(ctx, "admint", "s1", nil)
	if err != nil || sub == nil || *sub.MaxDeliveryCount != 4 {
		t.Fatalf("GetSubscription: %v, %v", sub, err)
	}
	sp := sub.SubscriptionProperties
	sp.LockDuration = harness.Ptr("PT20S")
	if u, err := ac.UpdateSubscription(ctx, "admint", "s1", sp, nil); err != nil || deref(u.LockDuration) != "PT20S" {
		t.Fatalf("UpdateSubscription: %v", err)
	}
	var subs []string
	sp2 := ac.NewListSubscriptionsPager("admint", &admin.ListSubscriptionsOptions{MaxPageSize: 1})
	for sp2.More() {
		page, err := sp2.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page.Subscriptions {
			subs = append(subs, s.SubscriptionName)
		}
	}
	if fmt.Sprint(subs) != "[s1 s2]" {
		t.Errorf("subscriptions: %v", subs)
	}
	// Rules: the one it was made with, then SQL (with parameters and an action), correlation,
	// true and false filters.
	rules := func() []string {
		var names []string
		p := ac.NewListRulesPager("admint", "s1", nil)
		for p.More() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("ListRules: %v", err)
			}
			for _, r := range page.Rules {
				names = append(names, r.Name)
			}
		}
		sort.Strings(names)
		return names
	}
	if got := rules(); fmt.Sprint(got) != "[firstrule]" {
		t.Fatalf("rules of s1: %v", got)
	}
	_, err = ac.CreateRule(ctx, "admint", "s1", &admin.CreateRuleOptions{
		Name:   harness.Ptr("sqlrule"),
		Filter: &admin.SQLFilter{Expression: "qty > @min AND sys.Label = 'order'", Parameters: map[string]any{"@min": int64(5)}},
		Action: &admin.SQLAction{Expression: "SET checked = @v", Parameters: map[string]any{"@v": "yes"}},
	})
	if err != nil {
		t.Fatalf("CreateRule sql: %v", err)
	}
	_, err = ac.CreateRule(ctx, "admint", "s1", &admin.CreateRuleOptions{
		Name: harness.Ptr("corrrule"),
		Filter: &admin.CorrelationFilter{CorrelationID: harness.Ptr("c-1"), Subject: harness.Ptr("subj"),
			ApplicationProperties: map[string]any{"region": "eu", "n": int64(3)}},
	})
	if err != nil {
		t.Fatalf("CreateRule correlation: %v", err)
	}
	if _, err := ac.CreateRule(ctx, "admint", "s1", &admin.CreateRuleOptions{Name: harness.Ptr("truerule"), Filter: &admin.TrueFilter{}}); err != nil {
		t.Fatalf("CreateRule true: %v", err)
	}
	if _, err := ac.CreateRule(ctx, "admint", "s1", &admin.CreateRuleOptions{Name: harness.Ptr("falserule"), Filter: &admin.FalseFilter{}}); err != nil {
		t.Fatalf("CreateRule false: %v", err)
	}
	if got := rules(); fmt.Sprint(got) != "[corrrule falserule firstrule sqlrule truerule]" {
		t.Fatalf("rules: %v", got)
	}
	// TopicRuntimeProperties' filter counts (api-version 2024-05): true, false and the $Default
	// of s2 count as SQL filters, as Service Bus counts them.
	if trt, err := ac.GetTopicRuntimeProperties(ctx, "admint", nil); err != nil || trt == nil {
		t.Fatalf("GetTopicRuntimeProperties: %v", err)
	} else if trt.SQLFilterCount != 5 || trt.CorrelationFilterCount != 1 {
		t.Errorf("SQLFilterCount %d, CorrelationFilterCount %d; want 5 and 1", trt.SQLFilterCount, trt.CorrelationFilterCount)
	}
	sqlRule, err := ac.GetRule(ctx, "admint", "s1", "sqlrule", nil)
	if err != nil || sqlRule == nil {
		t.Fatalf("GetRule: %v", err)
	}
	f, ok := sqlRule.Filter.(*admin.SQLFilter)
	if !ok || f.Expression != "qty > @min AND sys.Label = 'order'" || f.Parameters["@min"] != int64(5) {
		t.Errorf("sql rule filter: %#v", sqlRule.Filter)
	}
	if a, ok := sqlRule.Action.(*admin.SQLAction); !ok || a.Expression != "SET checked = @v" || a.Parameters["@v"] != "yes" {
		t.Errorf("sql rule action: %#v", sqlRule.Action)
	}
	corr, err := ac.GetRule(ctx, "admint", "s1", "corrrule", nil)
	if err != nil || corr == nil {
		t.Fatal(err)
	}
	cf, ok := corr.Filter.(*admin.CorrelationFilter)
	if !ok || deref(cf.CorrelationID) != "c-1" || deref(cf.Subject) != "subj" || cf.ApplicationProperties["region"] != "eu" || cf.ApplicationProperties["n"] != int64(3) {
		t.Errorf("correlation rule: %#v", corr.Filter)
	}
	corr.Filter = &admin.SQLFilter{Expression: "1=1"}
	if u, err := ac.UpdateRule(ctx, "admint", "s1", corr.RuleProperties); err != nil {
		t.Fatalf("UpdateRule: %v", err)
	} else if uf, ok := u.Filter.(*admin.SQLFilter); !ok || uf.Expression != "1=1" {
		t.Errorf("updated rule: %#v", u.Filter)
	}
	for _, r := range []string{"truerule", "falserule", "corrrule"} {
		if _, err := ac.DeleteRule(ctx, "admint", "s1", r, nil); err != nil {
			t.Fatalf("DeleteRule %s: %v", r, err)
		}
	}
	if r, err := ac.GetRule(ctx, "admint", "s1", "truerule", nil); err != nil || r != nil {
		t.Errorf("GetRule after delete: %v, %v", r, err)
	}
	// Runtime properties of topics and subscriptions, with messages routed by the rules.
	c := e.Client(t, nil)
	s, _ := c.NewSender("admint", nil)
	msgs := []*azservicebus.Message{
		{Body: []byte("1"), Subject: harness.Ptr("order"), ApplicationProperties: map[string]any{"qty": int64(9), "color": "blue"}},
		{Body: []byte("2"), ApplicationProperties: map[string]any{"color": "red"}},
		{Body: []byte("3"), ApplicationProperties: map[string]any{"color": "green"}},
	}
	for _, m := range msgs {
		if err := s.SendMessage(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	srt, err := ac.GetSubscriptionRuntimeProperties(ctx, "admint", "s1", nil)
	if err != nil || srt == nil || srt.ActiveMessageCount != 2 {
		t.Fatalf("GetSubscriptionRuntimeProperties s1: %+v, %v (want 2: sqlrule and firstrule matched)", srt, err)
	}
	if srt2, err := ac.GetSubscriptionRuntimeProperties(ctx, "admint", "s2", nil); err != nil || srt2.ActiveMessageCount != 3 {
		t.Fatalf("GetSubscriptionRuntimeProperties s2: %+v, %v", srt2, err)
	}
	trt, err := ac.GetTopicRuntimeProperties(ctx, "admint", nil)
	if err != nil || trt == nil || trt.SubscriptionCount != 2 || trt.CreatedAt.IsZero() {
		t.Fatalf("GetTopicRuntimeProperties: %+v, %v", trt, err)
	}
	var topics []string
	tpager := ac.NewListTopicsPager(&admin.ListTopicsOptions{MaxPageSize: 1})
	for tpager.More() {
		page, err := tpager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range page.Topics {
			topics = append(topics, x.TopicName)
		}
	}
	sort.Strings(topics)
	if fmt.Sprint(topics) != "[admint configtopic]" {
		t.Errorf("topics: %v", topics)
	}
	n := 0
	trp := ac.NewListTopicsRuntimePropertiesPager(nil)
	for trp.More() {
		page, err := trp.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.TopicRuntimeProperties)
	}
	srp := ac.NewListSubscriptionsRuntimePropertiesPager("admint", nil)
	m := 0
	for srp.More() {
		page, err := srp.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m += len(page.SubscriptionRuntimeProperties)
	}
	if n != 2 || m != 2 {
		t.Errorf("runtime pagers: %d topics, %d subscriptions", n, m)
	}
	if _, err := ac.DeleteSubscription(ctx, "admint", "s2", nil); err != nil {
		t.Fatalf("DeleteSubscription: %v", err)
	}
	if got, err := ac.GetSubscription(ctx, "admint", "s2", nil); err != nil || got != nil {
		t.Errorf("GetSubscription after delete: %v, %v", got, err)
	}
	if _, err := ac.DeleteTopic(ctx, "admint", nil); err != nil {
		t.Fatalf("DeleteTopic: %v", err)
	}
	if got, err := ac.GetTopic(ctx, "admint", nil); err != nil || got != nil {
		t.Errorf("GetTopic after delete: %v, %v", got, err)
	}
}

// Entities from Config.json read back through the admin client like any other.
func TestConfigEntities(t *testing.T) {
	ac := harness.Get(t).AdminClient(t)
	ctx := harness.Ctx(t, 30*time.Second)
	q, err := ac.GetQueue(ctx, "fromconfig", nil)
	if err != nil || q == nil || deref(q.LockDuration) != "PT1M" {
		t.Fatalf("GetQueue fromconfig: %v, %v", q, err)
	}
	s, err := ac.GetSubscription(ctx, "configtopic", "configsub", nil)
	if err != nil || s == nil {
		t.Fatalf("GetSubscription: %v, %v", s, err)
	}
	r, err := ac.GetRule(ctx, "configtopic", "configsub", "$Default", nil)
	if err != nil || r == nil {
		t.Fatalf("GetRule $Default: %v, %v", r, err)
	}
	if _, ok := r.Filter.(*admin.TrueFilter); !ok {
		t.Errorf("$Default filter: %#v", r.Filter)
	}
}

// A wrong key is 401 (azcore.ResponseError) from the management API.
func TestUnauthorized(t *testing.T) {
	e := harness.Get(t)
	transport := &http.Transport{TLSClientConfig: e.TLSConfig(t)}
	ac, err := admin.NewClientFromConnectionString(harness.ConnectionString(e.AMQPPort, harness.SASKeyName, "wrong-key"),
		&admin.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: transport}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ac.GetQueue(harness.Ctx(t, 30*time.Second), "fromconfig", nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GetQueue with a wrong key: %v, want 401", err)
	}
}
