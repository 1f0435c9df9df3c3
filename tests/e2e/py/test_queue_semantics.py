"""Queue semantics through Debian's azure-servicebus 7.8.2 (uamqp) over AMQPS on 5671:
TTL cap, expiry to the DLQ, scheduled messages, duplicate detection, disabled entities.

Time moves through the emulator's clock (POST /$sbemu/clock/advance?by=<ISO-8601>), so
nothing here waits minutes. The moves add up to well under an hour (a SAS token's
lifetime). Run with /usr/bin/python3 (see run.py); this module has its own emulator.
"""
import datetime
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import EmulatorTestCase, body, start_module_emulator, stop_module_emulator, text  # noqa: E402,F401

from azure.servicebus import (  # noqa: E402
    ServiceBusClient,
    ServiceBusMessage,
    ServiceBusReceiveMode,
    ServiceBusSubQueue,
)
from azure.servicebus.exceptions import ServiceBusError  # noqa: E402

WAIT = 3  # seconds: max_wait_time of receives that expect something
SWEEP_GRACE = 2.5  # background expiry / idle work runs at least once a second
TTL_REASON = "TTLExpiredException"
TTL_DESCRIPTION = "The message expired and was dead lettered."
QUEUES = [
    {"name": "py-ttl-cap", "properties": {"DefaultMessageTimeToLive": "PT1M"}},
    {"name": "py-expire-dlq", "properties": {"DeadLetteringOnMessageExpiration": True}},
    {"name": "py-expire-drop"},
    {"name": "py-sched"},
    {"name": "py-sched-mgmt"},
    {"name": "py-dedup", "properties": {"RequiresDuplicateDetection": True,
                                        "DuplicateDetectionHistoryTimeWindow": "PT1M"}},
    {"name": "py-disabled", "properties": {"Status": "Disabled"}},
    {"name": "py-send-disabled", "properties": {"Status": "SendDisabled"}},
    {"name": "py-receive-disabled", "properties": {"Status": "ReceiveDisabled"}},
    {"name": "py-fwd-a", "properties": {"ForwardTo": "py-fwd-b"}},
    {"name": "py-fwd-b"},
    {"name": "py-small", "properties": {"MaxSizeInMegabytes": 1}},
    {"name": "py-idle", "properties": {"AutoDeleteOnIdle": "PT5M"}},
]

EMU = None


def setUpModule():
    global EMU
    EMU = start_module_emulator(QUEUES, "py-qs")
    QsTestCase.emu = EMU


def tearDownModule():
    stop_module_emulator(EMU)




class QsTestCase(EmulatorTestCase):

    def poll(self, receiver, n, timeout):
        """Receives until n messages arrived or timeout seconds passed; returns them unsettled."""
        got = []
        deadline = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            got += receiver.receive_messages(max_message_count=n - len(got), max_wait_time=1)
        return got

    def ids(self, msgs):
        return [m.message_id for m in msgs]

    def rows(self, entity):
        """The store's rows of an entity (every subqueue and state), as "MessageId@subqueue"."""
        out = EMU.psql("SELECT coalesce(m.message_id, '') || '@' || m.subqueue FROM messages m"
                       " JOIN entities e ON e.id = m.entity_id WHERE e.path = '%s' ORDER BY m.sequence_number" % entity)
        return out.strip().split("\n") if out.strip() else []

    def wait_until(self, what, timeout=10.0):
        """Polls what() until it is truthy or timeout seconds passed; returns its last value."""
        deadline = time.monotonic() + timeout
        while True:
            v = what()
            if v or time.monotonic() > deadline:
                return v
            time.sleep(0.1)

    def rows_gone(self, entity, timeout=10.0):
        """rows(entity) once it is empty, or what is left after timeout seconds."""
        left = []
        def gone():
            left[:] = self.rows(entity)
            return not left
        self.wait_until(gone, timeout)
        return left


class TestQueueSemantics(QsTestCase):
    def test_1_ttl_cap_visible_on_received_message(self):
        self.send("py-ttl-cap",
                  ServiceBusMessage("long", message_id="long", time_to_live=datetime.timedelta(minutes=10)),
                  ServiceBusMessage("none", message_id="none"),
                  ServiceBusMessage("short", message_id="short", time_to_live=datetime.timedelta(seconds=30)))
        want = {"long": datetime.timedelta(seconds=60), "none": datetime.timedelta(seconds=60),
                "short": datetime.timedelta(seconds=30)}
        with self.client.get_queue_receiver("py-ttl-cap", max_wait_time=WAIT) as r:
            got = self.poll(r, 3, 10)
            self.assertEqual(sorted(self.ids(got)), ["long", "none", "short"])
            for m in got:
                self.assertEqual(m.time_to_live, want[m.message_id],
                                 "%s: time_to_live should be %s (DefaultMessageTimeToLive PT1M caps and fills in), got %s"
                                 % (m.message_id, want[m.message_id], m.time_to_live))
                self.assertEqual(m.expires_at_utc - m.enqueued_time_utc, want[m.message_id])
                r.complete_message(m)

    def test_2_expiry_moves_to_dlq_with_reason(self):
        self.send("py-expire-dlq", ServiceBusMessage("dies", message_id="x-dies",
                                                     time_to_live=datetime.timedelta(seconds=10)),
                  ServiceBusMessage("lives", message_id="x-lives"))
        EMU.advance("PT20S")
        with self.client.get_queue_receiver("py-expire-dlq", max_wait_time=WAIT) as r:
            got = self.poll(r, 2, 4)
            self.assertEqual(self.ids(got), ["x-lives"], "only the live message may be delivered after 20 s")
            for m in got:
                r.complete_message(m)
        with self.client.get_queue_receiver("py-expire-dlq", sub_queue=ServiceBusSubQueue.DEAD_LETTER,
                                            max_wait_time=WAIT) as dlq:
            got = self.poll(dlq, 1, SWEEP_GRACE + 3)
            self.assertEqual(self.ids(got), ["x-dies"], "the expired message should be in the DLQ")
            d = got[0]
            self.assertEqual(body(d), b"dies")
            self.assertEqual(d.dead_letter_reason, TTL_REASON)
            self.assertEqual(d.dead_letter_error_description, TTL_DESCRIPTION)
            dlq.complete_message(d)

    def test_3_expiry_without_dead_lettering_drops(self):
        self.send("py-expire-drop", ServiceBusMessage("dies", message_id="drop-1",
                                                      time_to_live=datetime.timedelta(seconds=10)))
        self.assertEqual(self.rows("py-expire-drop"), ["drop-1@0"])
        EMU.advance("PT20S")
        # the sweep deletes it with no receiver looking: its row goes
        self.assertEqual(self.rows_gone("py-expire-drop"), [], "the expired message's row is still there")
        with self.client.get_queue_receiver("py-expire-drop", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE,
                                            max_wait_time=2) as r:
            self.assertEqual(self.ids(r.receive_messages(max_message_count=5, max_wait_time=2)), [],
                             "an expired message must not be delivered (receive-and-delete)")
        with self.client.get_queue_receiver("py-expire-drop", sub_queue=ServiceBusSubQueue.DEAD_LETTER,
                                            max_wait_time=2) as dlq:
            self.assertEqual(self.ids(dlq.receive_messages(max_message_count=5, max_wait_time=2)), [],
                             "DeadLetteringOnMessageExpiration is false: the DLQ must stay empty")

    def test_4_scheduled_enqueue_time_becomes_visible_after_advancing(self):
        at = EMU.clock_now() + datetime.timedelta(minutes=10)
        self.send("py-sched",
                  ServiceBusMessage("later", message_id="sched-1", scheduled_enqueue_time_utc=at),
                  ServiceBusMessage("now", message_id="sched-now"))
        with self.client.get_queue_receiver("py-sched", max_wait_time=WAIT) as r:
            got = self.poll(r, 2, 4)
            self.assertEqual(self.ids(got), ["sched-now"], "the message scheduled 10 min ahead must not arrive yet")
            r.complete_message(got[0])
            EMU.advance("PT11M")
            got = self.poll(r, 1, 5)
            self.assertEqual(self.ids(got), ["sched-1"], "the scheduled message should arrive once its time passed")
            m = got[0]
            self.assertEqual(body(m), b"later")
            sched = m.scheduled_enqueue_time_utc
            self.assertIsNotNone(sched, "scheduled_enqueue_time_utc missing on the received message")
            self.assertLess(abs((sched.replace(tzinfo=datetime.timezone.utc) - at).total_seconds()), 1,
                            "scheduled_enqueue_time_utc %s, sent %s" % (sched, at))
            enq = m.enqueued_time_utc.replace(tzinfo=datetime.timezone.utc)
            self.assertGreaterEqual(enq, at - datetime.timedelta(seconds=1),
                                    "enqueued_time_utc %s should be the activation time (>= the scheduled %s)"
                                    % (enq, at))
            r.complete_message(m)

    def test_5_schedule_messages_returns_sequence_numbers_and_activates(self):
        at = EMU.clock_now() + datetime.timedelta(minutes=10)
        with self.client.get_queue_sender("py-sched-mgmt") as s:
            seqs = s.schedule_messages([ServiceBusMessage("m%d" % i, message_id="sm-%d" % i) for i in range(2)], at)
        self.assertEqual(len(seqs), 2, "schedule_messages should return one sequence number per message: %r" % (seqs,))
        self.assertTrue(all(isinstance(n, int) and n > 0 for n in seqs), "sequence numbers: %r" % (seqs,))
        with self.client.get_queue_receiver("py-sched-mgmt", max_wait_time=WAIT) as r:
            self.assertEqual(self.ids(r.receive_messages(max_message_count=5, max_wait_time=2)), [],
                             "scheduled messages must be invisible before their time")
            EMU.advance("PT11M")
            got = self.poll(r, 2, 5)
            self.assertEqual(self.ids(got), ["sm-0", "sm-1"])
            for m in got:
                r.complete_message(m)

    def test_6_duplicate_detection(self):
        # Each phase gets its own receiver: uamqp 1.5.3 puts a receiver whose receive timed out
        # into an error state when another connection of the process closes meanwhile.
        self.send("py-dedup", ServiceBusMessage("first", message_id="d1"))
        self.send("py-dedup", ServiceBusMessage("second", message_id="d1"))  # accepted, dropped
        with self.client.get_queue_receiver("py-dedup", max_wait_time=WAIT) as r:
            got = self.poll(r, 2, 4)
            self.assertEqual([(m.message_id, body(m)) for m in got], [("d1", b"first")],
                             "a duplicate MessageId within the window must be dropped")
            r.complete_message(got[0])
        EMU.advance("PT2M")
        self.send("py-dedup", ServiceBusMessage("third", message_id="d1"))
        with self.client.get_queue_receiver("py-dedup", max_wait_time=WAIT) as r:
            got = self.poll(r, 1, 5)
            self.assertEqual([(m.message_id, body(m)) for m in got], [("d1", b"third")],
                             "after the 1 min window d1 is new again")
            r.complete_message(got[0])

    def assert_disabled(self, cm, what):
        e = cm.exception
        self.assertIn("EntityDisabled", type(e).__name__,
                      "%s: expected MessagingEntityDisabledError, got %s: %s" % (what, type(e).__name__, e))
        self.assertTrue(str(e), "%s: the error should carry a message" % what)

    def test_7_send_to_disabled_queues_fails(self):
        for q in ("py-disabled", "py-send-disabled"):
            with self.assertRaises(ServiceBusError) as cm:
                self.send(q, ServiceBusMessage("x"))
            self.assert_disabled(cm, "send to " + q)

    def test_8_receive_from_disabled_queues_fails(self):
        for q in ("py-disabled", "py-receive-disabled"):
            with self.assertRaises(ServiceBusError) as cm:
                with self.client.get_queue_receiver(q, max_wait_time=2) as r:
                    r.receive_messages(max_message_count=1, max_wait_time=2)
            self.assert_disabled(cm, "receive from " + q)

    def test_9_allowed_direction_of_partly_disabled_queues_works(self):
        self.send("py-receive-disabled", ServiceBusMessage("stored", message_id="rd-1"))
        with self.client.get_queue_receiver("py-send-disabled", max_wait_time=2) as r:
            self.assertEqual(self.ids(r.receive_messages(max_message_count=1, max_wait_time=2)), [])



    def test_10_forward_to_delivers_to_the_destination(self):
        with self.client.get_queue_sender("py-fwd-a") as s:
            s.send_messages(ServiceBusMessage(b"forwarded", message_id="pf-1"))
        with self.client.get_queue_receiver("py-fwd-b", max_wait_time=WAIT) as r:
            got = r.receive_messages(max_message_count=5, max_wait_time=WAIT)
            self.assertEqual([text(m.message_id) for m in got], ["pf-1"],
                             "the message sent to py-fwd-a should arrive in py-fwd-b")
            for m in got:
                r.complete_message(m)

    def test_11_max_size_refuses_with_quota_exceeded(self):
        # 60 KB: against sbemu, uamqp 1.5.3 refuses to queue messages over ~64 KB on the client side
        # ("failed to add message data to outgoing queue"); an open item, see the issue note
        payload = b"q" * (60 * 1024)
        refused = None
        with self.client.get_queue_sender("py-small") as s:
            for i in range(25):
                try:
                    s.send_messages(ServiceBusMessage(payload, message_id="big-%d" % i))
                except ServiceBusError as e:
                    refused = (i, e)
                    break
        self.assertIsNotNone(refused, "25 x 60 KB into a 1 MB queue should be refused with QuotaExceeded")
        self.assertIn(refused[0], (16, 17), "1 MB holds 16 or 17 of the 60 KB messages, refused at %d: %s: %s"
                      % (refused[0], type(refused[1]).__name__, refused[1]))
        self.assertIn("QuotaExceeded", type(refused[1]).__name__,
                      "expected ServiceBusQuotaExceededError, got %s: %s" % (type(refused[1]).__name__, refused[1]))

    def test_12_auto_delete_on_idle_deletes_the_queue(self):
        EMU.advance("PT6M")
        # the sweep deletes the idle queue with no client looking: wait for its row to go
        gone = self.wait_until(lambda: EMU.psql("SELECT count(*) FROM queues WHERE name = 'py-idle'").strip() == "0")
        self.assertTrue(gone, "py-idle is still in the queues table after 10 s")
        with self.assertRaises(ServiceBusError) as ctx:
            with self.client.get_queue_sender("py-idle") as s:
                s.send_messages(ServiceBusMessage(b"too late"))
        # 7.8.2 reports a refused attach as ServiceBusCommunicationError carrying the condition
        self.assertIn("could not be found", str(ctx.exception),
                      "sending to an idle-deleted queue: expected the entity-not-found error, got %s: %s"
                      % (type(ctx.exception).__name__, ctx.exception))

if __name__ == "__main__":
    unittest.main()
