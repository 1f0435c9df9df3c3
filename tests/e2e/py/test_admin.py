"""The management API through Debian's azure-servicebus 7.8.2 ServiceBusAdministrationClient.

That client always speaks https to the Endpoint's host:port (it keeps the port): here a
free TLS port of the emulator, which serves HTTP after the handshake, so 5671 stays free
for the AMQP suites. The emulator's certificate is trusted through REQUESTS_CA_BUNDLE.
It asks with lowercase /subscriptions/ and /rules/ paths, sends enrich=false, takes
entity names from each entry's <title> and follows a feed's next link only when the feed
has exactly two links. Messages for the runtime counts are put in with SQL (this module
uses no AMQP client: that one can only dial 5671).

Run with /usr/bin/python3 (see run.py). One emulator serves the whole module.
"""
import datetime
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import free_port, start_module_emulator, stop_module_emulator  # noqa: E402

from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError  # noqa: E402
from azure.servicebus.management import (  # noqa: E402
    CorrelationRuleFilter,
    ServiceBusAdministrationClient,
    SqlRuleAction,
    SqlRuleFilter,
    TrueRuleFilter,
)

QUEUES = [{"name": "from-config", "properties": {"LockDuration": "PT30S", "MaxDeliveryCount": 4}}]
EMU = None


def setUpModule():
    global EMU
    EMU = start_module_emulator(QUEUES, "py-admin", amqps_port=free_port())
    os.environ["REQUESTS_CA_BUNDLE"] = EMU.cert_path


def tearDownModule():
    os.environ.pop("REQUESTS_CA_BUNDLE", None)
    stop_module_emulator(EMU)


def admin(key="SAS_KEY_VALUE"):
    return ServiceBusAdministrationClient.from_connection_string(
        "Endpoint=sb://localhost:%d;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=%s"
        % (EMU.amqps_port, key))


def put_messages(entity, states):
    """Messages inserted with SQL into entity (a queue, or 'topic/Subscriptions/sub'): one per
    (subqueue, state) pair, each 10 bytes, with the entity's size kept."""
    rows = ", ".join("(%d, %d)" % s for s in states)
    EMU.psql(
        "WITH e AS (SELECT id FROM entities WHERE path = '%s'),"
        " v(subqueue, state) AS (VALUES %s),"
        " n AS (SELECT row_number() OVER () AS k, v.* FROM v),"
        " r AS (UPDATE entity_runtime SET next_sequence_number = next_sequence_number + (SELECT count(*) FROM n),"
        "  size_in_bytes = size_in_bytes + 10 * (SELECT count(*) FROM n) WHERE entity_id = (SELECT id FROM e)"
        "  RETURNING next_sequence_number - (SELECT count(*) FROM n) AS first)"
        " INSERT INTO messages (entity_id, sequence_number, subqueue, state, enqueued_at, available_at, message)"
        " SELECT (SELECT id FROM e), r.first + n.k - 1, n.subqueue, n.state, now(),"
        "  now() + CASE WHEN n.state = 2 THEN interval '1 day' ELSE interval '0' END, '\\x00010203040506070809'::bytea"
        " FROM n, r" % (entity, rows))


class AdminTest(unittest.TestCase):

    def run(self, result=None):
        before = len(result.failures) + len(result.errors) if result else 0
        out = super().run(result)
        if result and len(result.failures) + len(result.errors) > before:
            EMU.failed = True
            EMU.dump_log(self.id())
        return out

    def test_queue_round_trip(self):
        with admin() as a:
            q = a.create_queue(
                "pya-every", lock_duration=datetime.timedelta(seconds=45), max_delivery_count=7,
                default_message_time_to_live="PT1H", dead_lettering_on_message_expiration=True,
                requires_duplicate_detection=True, duplicate_detection_history_time_window="PT2M",
                max_size_in_megabytes=2048, enable_batched_operations=False, user_metadata="meta <&>",
                auto_delete_on_idle=datetime.timedelta(minutes=10))
            for x in (q, a.get_queue("pya-every")):
                self.assertEqual(x.name, "pya-every")
                self.assertEqual(x.lock_duration, datetime.timedelta(seconds=45))
                self.assertEqual(x.max_delivery_count, 7)
                self.assertEqual(x.default_message_time_to_live, datetime.timedelta(hours=1))
                self.assertTrue(x.dead_lettering_on_message_expiration)
                self.assertTrue(x.requires_duplicate_detection)
                self.assertEqual(x.duplicate_detection_history_time_window, datetime.timedelta(minutes=2))
                self.assertEqual(x.max_size_in_megabytes, 2048)
                self.assertFalse(x.enable_batched_operations)
                self.assertEqual(x.user_metadata, "meta <&>")
                self.assertEqual(x.auto_delete_on_idle, datetime.timedelta(minutes=10))
                self.assertEqual(x.status, "Active")
            # update with what came back (Python sends the whole description again)
            g = a.get_queue("pya-every")
            g.max_delivery_count = 12
            g.status = "ReceiveDisabled"
            a.update_queue(g)
            again = a.get_queue("pya-every")
            self.assertEqual(again.max_delivery_count, 12)
            self.assertEqual(again.status, "ReceiveDisabled")
            self.assertEqual(again.lock_duration, datetime.timedelta(seconds=45))
            self.assertEqual(EMU.psql("SELECT max_delivery_count, status FROM queues WHERE name = 'pya-every'").strip(),
                             "12|ReceiveDisabled")
            a.update_queue(again, forward_to="from-config")
            self.assertTrue(a.get_queue("pya-every").forward_to.endswith("/from-config"))
            self.assertEqual(EMU.psql("SELECT forward_to FROM queues WHERE name = 'pya-every'").strip(), "from-config")

    def test_runtime_counts(self):
        with admin() as a:
            a.create_queue("pya-counts")
            # two active (one deferred), one dead-lettered, one scheduled
            put_messages("pya-counts", [(0, 0), (0, 1), (1, 0), (0, 2)])
            rt = a.get_queue_runtime_properties("pya-counts")
            self.assertEqual(rt.name, "pya-counts")
            self.assertEqual(rt.active_message_count, 2)
            self.assertEqual(rt.dead_letter_message_count, 1)
            self.assertEqual(rt.scheduled_message_count, 1)
            self.assertEqual(rt.transfer_message_count, 0)
            self.assertEqual(rt.total_message_count, 4)
            self.assertEqual(rt.size_in_bytes, 40)
            self.assertIsNotNone(rt.created_at_utc)
            listed = [x for x in a.list_queues_runtime_properties() if x.name == "pya-counts"]
            self.assertEqual(len(listed), 1)
            self.assertEqual(listed[0].dead_letter_message_count, 1)

    def test_list_pages_and_names(self):
        with admin() as a:
            for i in (2, 0, 1):
                a.create_queue("pya-page-%d" % i)
            names = [q.name for q in a.list_queues(max_page_size=2)]
            mine = [n for n in names if n.startswith("pya-page-")]
            self.assertEqual(mine, ["pya-page-0", "pya-page-1", "pya-page-2"])
            self.assertIn("from-config", names)
            self.assertEqual(names, [q.name for q in a.list_queues()])
            self.assertEqual(len(set(names)), len(names), "no page repeats another")

    def test_config_and_sql_entities(self):
        with admin() as a:
            q = a.get_queue("from-config")
            self.assertEqual(q.lock_duration, datetime.timedelta(seconds=30))
            self.assertEqual(q.max_delivery_count, 4)
            EMU.psql("INSERT INTO topics (name, user_metadata) VALUES ('pya-sql-topic', 'by sql')")
            EMU.psql("INSERT INTO subscriptions (topic_id, name, max_delivery_count) SELECT id, 'sub', 3 FROM topics"
                     " WHERE name = 'pya-sql-topic'")
            t = a.get_topic("pya-sql-topic")
            self.assertEqual(t.user_metadata, "by sql")
            s = a.get_subscription("pya-sql-topic", "sub")
            self.assertEqual(s.max_delivery_count, 3)
            self.assertEqual([r.name for r in a.list_rules("pya-sql-topic", "sub")], ["$Default"])
            self.assertIsInstance(a.get_rule("pya-sql-topic", "sub", "$Default").filter, TrueRuleFilter)

    def test_topics_subscriptions_rules(self):
        with admin() as a:
            a.create_topic("pya-topic", support_ordering=True, max_size_in_megabytes=2048)
            t = a.get_topic("pya-topic")
            self.assertTrue(t.support_ordering)
            self.assertEqual(t.max_size_in_megabytes, 2048)
            a.create_subscription("pya-topic", "sub", lock_duration=datetime.timedelta(seconds=20),
                                  max_delivery_count=5, dead_lettering_on_filter_evaluation_exceptions=False)
            s = a.get_subscription("pya-topic", "sub")
            self.assertEqual(s.name, "sub")
            self.assertEqual(s.lock_duration, datetime.timedelta(seconds=20))
            self.assertEqual(s.max_delivery_count, 5)
            self.assertFalse(s.dead_lettering_on_filter_evaluation_exceptions)
            s.max_delivery_count = 8
            a.update_subscription("pya-topic", s)
            self.assertEqual(a.get_subscription("pya-topic", "sub").max_delivery_count, 8)
            when = datetime.datetime(2000, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
            props = {"s": "text", "i": 5, "l": 9000000000, "f": 1.5, "b": True, "d": when,
                     "t": datetime.timedelta(minutes=1)}
            a.create_rule("pya-topic", "sub", "corr",
                          filter=CorrelationRuleFilter(correlation_id="cid", label="red", properties=props))
            r = a.get_rule("pya-topic", "sub", "corr")
            self.assertIsInstance(r.filter, CorrelationRuleFilter)
            self.assertEqual(r.filter.correlation_id, "cid")
            self.assertEqual(r.filter.label, "red")
            self.assertEqual(dict(r.filter.properties), props)
            a.create_rule("pya-topic", "sub", "sql", filter=SqlRuleFilter("a = @p", parameters={"@p": 3}),
                          action=SqlRuleAction("SET b = @v", parameters={"@v": "z"}))
            r = a.get_rule("pya-topic", "sub", "sql")
            self.assertEqual(r.filter.sql_expression, "a = @p")
            self.assertEqual(dict(r.filter.parameters), {"@p": 3})
            self.assertEqual(r.action.sql_expression, "SET b = @v")
            self.assertEqual(dict(r.action.parameters), {"@v": "z"})
            r.filter = SqlRuleFilter("a > 10")
            a.update_rule("pya-topic", "sub", r)
            self.assertEqual(a.get_rule("pya-topic", "sub", "sql").filter.sql_expression, "a > 10")
            self.assertEqual([x.name for x in a.list_rules("pya-topic", "sub")], ["$Default", "corr", "sql"])
            a.delete_rule("pya-topic", "sub", "$Default")
            self.assertEqual([x.name for x in a.list_rules("pya-topic", "sub", max_page_size=1)], ["corr", "sql"])
            a.create_subscription("pya-topic", "other")
            self.assertEqual([x.name for x in a.list_subscriptions("pya-topic", max_page_size=1)], ["other", "sub"])
            put_messages("pya-topic/Subscriptions/sub", [(0, 0), (1, 0)])
            srt = a.get_subscription_runtime_properties("pya-topic", "sub")
            self.assertEqual((srt.active_message_count, srt.dead_letter_message_count, srt.total_message_count),
                             (1, 1, 2))
            trt = a.get_topic_runtime_properties("pya-topic")
            self.assertEqual(trt.subscription_count, 2)
            self.assertEqual(trt.size_in_bytes, 20)
            self.assertIn("pya-topic", [x.name for x in a.list_topics()])
            a.delete_subscription("pya-topic", "other")
            a.delete_topic("pya-topic")
            with self.assertRaises(ResourceNotFoundError):
                a.get_topic("pya-topic")

    def test_namespace(self):
        with admin() as a:
            ns = a.get_namespace_properties()
            self.assertEqual(ns.name, "sbemulatorns")
            self.assertEqual(ns.messaging_sku, "Standard")
            self.assertEqual(ns.namespace_type, "Messaging")
            self.assertIsNotNone(ns.created_at_utc)

    def test_errors(self):
        with admin() as a:
            a.create_queue("pya-dup")
            with self.assertRaises(ResourceExistsError):
                a.create_queue("pya-dup")
            for call in (lambda: a.get_queue("pya-none"), lambda: a.get_queue_runtime_properties("pya-none"),
                         lambda: a.delete_queue("pya-none"), lambda: a.get_topic("pya-none"),
                         lambda: a.get_subscription("pya-none", "s"), lambda: a.get_rule("pya-none", "s", "r"),
                         lambda: a.create_subscription("pya-none", "s")):
                with self.assertRaises(ResourceNotFoundError):
                    call()
            with self.assertRaises(HttpResponseError) as cm:
                a.create_queue("pya-bad", lock_duration="PT1S")
            self.assertEqual(cm.exception.status_code, 400)
            self.assertIn("LockDuration \"PT1S\" is below the minimum PT5S", str(cm.exception))
            with self.assertRaises(HttpResponseError) as cm:
                a.create_rule("pya-none", "s", "r", filter=SqlRuleFilter("a = = 1"))
            self.assertEqual(cm.exception.status_code, 400)
            self.assertIn("SQL filter of rule 'r' is invalid", str(cm.exception))
        with admin(key="wrong") as bad:
            with self.assertRaises(HttpResponseError) as cm:
                bad.get_queue("from-config")
            self.assertEqual(cm.exception.status_code, 401)
            self.assertIn("signature does not match", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
