"""Topics through Debian's azure-servicebus 7.8.2 (uamqp) over AMQPS on 5671: fan-out to
subscriptions, SQL/correlation filters and an action rule, dead-lettering on a subscription
(by the receiver and on a filter evaluation error), and a scheduled topic message that fans
out when the emulator's clock reaches it.

Run with /usr/bin/python3 (see run.py); this module has its own emulator.
"""
import datetime
import json
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import EmulatorTestCase, body, start_module_emulator, stop_module_emulator, text  # noqa: E402

from azure.servicebus import ServiceBusMessage, ServiceBusSubQueue  # noqa: E402

WAIT = 3


def sql_rule(name, expr, action=None):
    p = {"FilterType": "Sql", "SqlFilter": {"SqlExpression": expr}}
    if action:
        p["Action"] = {"SqlExpression": action}
    return {"Name": name, "Properties": p}


TOPICS = [
    {"name": "py-fan", "subscriptions": [{"name": "s1"}, {"name": "s2"}]},
    {"name": "py-filter", "subscriptions": [
        {"name": "red", "rules": [sql_rule("red", "color = 'red' AND sys.Label IS NULL")]},
        {"name": "corr", "rules": [{"Name": "c", "Properties": {
            "FilterType": "Correlation", "CorrelationFilter": {"Label": "lbl", "Properties": {"k": "v"}}}}]},
        {"name": "act", "rules": [sql_rule("act", "color = 'red'", "SET tagged = 'yes'; REMOVE color")]},
    ]},
    {"name": "py-dl", "subscriptions": [
        {"name": "s"},
        {"name": "div", "rules": [sql_rule("div", "qty / 0 = 1")]},
    ]},
    {"name": "py-sched", "subscriptions": [{"name": "a"}, {"name": "b"}]},
]

EMU = None


def setUpModule():
    global EMU
    EMU = start_module_emulator([], "py-topics", topics=TOPICS)
    TopicsTestCase.emu = EMU


def tearDownModule():
    stop_module_emulator(EMU)


def _clock(method, path):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (EMU.http_port, path), method=method,
                                 data=b"" if method == "POST" else None)
    with urllib.request.urlopen(req, timeout=5) as r:
        j = json.loads(r.read().decode())
    return datetime.datetime.fromisoformat(j["now"].replace("Z", "+00:00"))


def props(m):
    return {text(k): text(v) for k, v in (m.application_properties or {}).items()}


class TopicsTestCase(EmulatorTestCase):

    def publish(self, topic, *messages):
        with self.client.get_topic_sender(topic) as s:
            s.send_messages(list(messages))

    def drain(self, topic, sub, n, dlq=False, timeout=6):
        """Receives (peek-lock) until n messages or timeout, then a short wait for extras; completes all."""
        kw = {"sub_queue": ServiceBusSubQueue.DEAD_LETTER} if dlq else {}
        got = []
        with self.client.get_subscription_receiver(topic, sub, max_wait_time=WAIT, **kw) as r:
            deadline = time.monotonic() + timeout
            while len(got) < n and time.monotonic() < deadline:
                got += r.receive_messages(max_message_count=n - len(got), max_wait_time=1)
            got += r.receive_messages(max_message_count=5, max_wait_time=1)
            for m in got:
                r.complete_message(m)
        self.assertEqual(len(got), n, "%s/Subscriptions/%s%s: expected %d message(s), got %r" % (
            topic, sub, "/$DeadLetterQueue" if dlq else "", n, [m.message_id for m in got]))
        return got


class TestTopics(TopicsTestCase):
    def test_1_send_to_topic_each_subscription_gets_a_copy(self):
        self.publish("py-fan", ServiceBusMessage("hello", message_id="f1", subject="greeting",
                                                 application_properties={"color": "red"}))
        seqs = []
        for sub in ("s1", "s2"):
            [m] = self.drain("py-fan", sub, 1)
            self.assertEqual((m.message_id, body(m), m.subject, props(m)),
                             ("f1", b"hello", "greeting", {"color": "red"}), sub)
            self.assertEqual(m.delivery_count, 0)
            seqs.append(m.sequence_number)
        self.assertEqual(seqs[0], seqs[1], "both copies carry the topic's sequence number: %r" % seqs)

    def test_2_filtered_subscriptions_and_an_action(self):
        self.publish("py-filter",
                     ServiceBusMessage("r", message_id="m-red", application_properties={"color": "red"}),
                     ServiceBusMessage("b", message_id="m-blue", application_properties={"color": "blue"}),
                     ServiceBusMessage("c", message_id="m-corr", subject="lbl", application_properties={"k": "v"}),
                     ServiceBusMessage("c2", message_id="m-corr-no", subject="lbl", application_properties={"k": "w"}))
        self.assertEqual([m.message_id for m in self.drain("py-filter", "red", 1)], ["m-red"])
        self.assertEqual([m.message_id for m in self.drain("py-filter", "corr", 1)], ["m-corr"])
        [a] = self.drain("py-filter", "act", 1)
        self.assertEqual(a.message_id, "m-red")
        self.assertEqual(props(a), {"tagged": "yes", "RuleName": "act"})
        self.assertEqual(body(a), b"r")

    def test_3_dead_letter_on_a_subscription(self):
        self.publish("py-dl", ServiceBusMessage("reject me", message_id="dl-1", application_properties={"qty": 2}))
        with self.client.get_subscription_receiver("py-dl", "s", max_wait_time=WAIT) as r:
            got = r.receive_messages(max_message_count=1, max_wait_time=WAIT)
            self.assertEqual([m.message_id for m in got], ["dl-1"])
            r.dead_letter_message(got[0], reason="Rejected", error_description="by the test")
        [d] = self.drain("py-dl", "s", 1, dlq=True)
        self.assertEqual((d.message_id, body(d), d.dead_letter_reason, d.dead_letter_error_description),
                         ("dl-1", b"reject me", "Rejected", "by the test"))
        self.drain("py-dl", "s", 0)
        # div: qty / 0 fails to evaluate -> dead-lettered there (DeadLetteringOnFilterEvaluationExceptions default true).
        [f] = self.drain("py-dl", "div", 1, dlq=True)
        self.assertEqual((f.message_id, f.dead_letter_reason), ("dl-1", "FilterEvaluationException"))
        self.drain("py-dl", "div", 0)

    def test_4_scheduled_topic_message_fans_out_when_due(self):
        at = _clock("GET", "/$sbemu/clock") + datetime.timedelta(minutes=10)
        with self.client.get_topic_sender("py-sched") as s:
            seqs = s.schedule_messages([ServiceBusMessage("later", message_id="sc-1"),
                                        ServiceBusMessage("cancelled", message_id="sc-2")], at)
            self.assertEqual(len(seqs), 2, "schedule_messages returns one sequence number per message: %r" % (seqs,))
            s.cancel_scheduled_messages(seqs[1])
        self.drain("py-sched", "a", 0, timeout=1)
        _clock("POST", "/$sbemu/clock/advance?by=PT11M")
        for sub in ("a", "b"):
            [m] = self.drain("py-sched", sub, 1, timeout=8)
            self.assertEqual((m.message_id, body(m)), ("sc-1", b"later"), sub)
            sched = m.scheduled_enqueue_time_utc.replace(tzinfo=datetime.timezone.utc)
            self.assertLess(abs((sched - at).total_seconds()), 1, "%s: scheduled_enqueue_time_utc %s, sent %s" % (sub, sched, at))
