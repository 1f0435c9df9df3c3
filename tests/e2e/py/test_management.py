"""$management operations through Debian's azure-servicebus 7.8.2 (uamqp) over AMQPS on 5671:
peek, schedule / cancel, defer + receive_deferred_messages + settle, renew_message_lock.

Run with /usr/bin/python3 (see run.py). One emulator serves the whole module.
"""
import datetime
import os
import sys
import time
import unittest
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import EmulatorTestCase, body, start_module_emulator, stop_module_emulator, text  # noqa: E402,F401

from azure.servicebus import (  # noqa: E402
    ServiceBusClient,
    ServiceBusMessage,
    ServiceBusReceiveMode,
    ServiceBusSubQueue,
)
from azure.servicebus.exceptions import ServiceBusError  # noqa: E402

WAIT = 5  # seconds: max_wait_time of every receive
LOCK_SECONDS = 5
QUEUES = [
    "pym-peek", "pym-empty", "pym-schedule", "pym-cancel", "pym-defer", "pym-defer-dl", "pym-defer-rnd",
    {"name": "pym-renew", "properties": {"LockDuration": "PT5S"}},
]

EMU = None


def setUpModule():
    global EMU
    EMU = start_module_emulator(QUEUES, "py-mgmt")
    SbMgmtTestCase.emu = EMU


def tearDownModule():
    stop_module_emulator(EMU)



def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def aware(dt):
    return dt if dt.tzinfo else dt.replace(tzinfo=datetime.timezone.utc)


class SbMgmtTestCase(EmulatorTestCase):

    def receive_exact(self, receiver, n, timeout=20):
        got = []
        deadline = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            got += receiver.receive_messages(max_message_count=n - len(got), max_wait_time=WAIT)
        self.assertEqual(len(got), n, "expected %d message(s), got %s" % (n, [m.message_id for m in got]))
        return got


class TestPythonManagement(SbMgmtTestCase):
    def test_peek(self):
        self.send("pym-peek", *[ServiceBusMessage("p%d" % i, message_id="pp-%d" % i) for i in range(3)])
        with self.client.get_queue_receiver("pym-peek", max_wait_time=WAIT) as r:
            peeked = r.peek_messages(max_message_count=10, sequence_number=1)
            self.assertEqual([m.message_id for m in peeked], ["pp-0", "pp-1", "pp-2"])
            self.assertEqual([body(m) for m in peeked], [b"p0", b"p1", b"p2"])
            seqs = [m.sequence_number for m in peeked]
            self.assertEqual(seqs, sorted(seqs))
            # From the second, at most one.
            some = r.peek_messages(max_message_count=1, sequence_number=seqs[1])
            self.assertEqual([m.message_id for m in some], ["pp-1"])
            self.assertEqual(r.peek_messages(max_message_count=5, sequence_number=seqs[2] + 1), [])
            # Peek locked nothing.
            got = self.receive_exact(r, 3)
            for m in got:
                r.complete_message(m)

    def test_peek_empty(self):
        with self.client.get_queue_receiver("pym-empty", max_wait_time=WAIT) as r:
            self.assertEqual(r.peek_messages(max_message_count=10), [])

    def test_schedule_invisible_until_due(self):
        # Due an hour ahead on the emulator's movable clock, which only the test moves: the
        # message cannot come due while set-up runs, however slow the machine. (Runs last of
        # this module's tests, by name: the clock only moves forward.)
        due = EMU.clock_now() + datetime.timedelta(hours=1)
        with self.client.get_queue_sender("pym-schedule") as s:
            seqs = s.schedule_messages(ServiceBusMessage("later", message_id="ps-1"), due)
        self.assertEqual(len(seqs), 1)
        self.assertGreaterEqual(seqs[0], 1)
        with self.client.get_queue_receiver("pym-schedule", max_wait_time=WAIT) as r:
            [p] = r.peek_messages(max_message_count=1, sequence_number=seqs[0])
            self.assertEqual(p.message_id, "ps-1")
            self.assertEqual(p.sequence_number, seqs[0])
            self.assertEqual(str(p.state), str(p.state.__class__.SCHEDULED))
            self.assertEqual(r.receive_messages(max_message_count=1, max_wait_time=1), [])
            EMU.advance("PT1H")
            [m] = self.receive_exact(r, 1)
            self.assertEqual(m.message_id, "ps-1")
            self.assertEqual(body(m), b"later")
            # As on Service Bus, activation gives the message a new sequence number.
            self.assertGreater(m.sequence_number, seqs[0])
            self.assertLess(abs((aware(m.scheduled_enqueue_time_utc) - due).total_seconds()), 1)
            r.complete_message(m)

    def test_cancel_scheduled(self):
        later = utcnow() + datetime.timedelta(hours=1)
        with self.client.get_queue_sender("pym-cancel") as s:
            a, b = s.schedule_messages(
                [ServiceBusMessage("a", message_id="pc-keep"), ServiceBusMessage("b", message_id="pc-cancel")], later)
            s.cancel_scheduled_messages(b)
            with self.client.get_queue_receiver("pym-cancel", max_wait_time=WAIT) as r:
                self.assertEqual([m.message_id for m in r.peek_messages(max_message_count=10, sequence_number=a)],
                                 ["pc-keep"])
                s.cancel_scheduled_messages([a, b])
                self.assertEqual(r.peek_messages(max_message_count=10, sequence_number=a), [])

    def test_defer_receive_deferred_complete(self):
        self.send("pym-defer", ServiceBusMessage("d", message_id="pd-1"))
        with self.client.get_queue_receiver("pym-defer", max_wait_time=WAIT) as r:
            [m] = self.receive_exact(r, 1)
            seq = m.sequence_number
            r.defer_message(m)
            self.assertEqual(r.receive_messages(max_message_count=1, max_wait_time=1), [])
            [p] = r.peek_messages(max_message_count=1, sequence_number=seq)
            self.assertEqual(str(p.state), str(p.state.__class__.DEFERRED))
            [d] = r.receive_deferred_messages([seq])
            self.assertEqual(d.message_id, "pd-1")
            self.assertEqual(body(d), b"d")
            self.assertEqual(d.sequence_number, seq)
            self.assertIsNotNone(d.lock_token)
            self.assertGreater(aware(d.locked_until_utc), utcnow())
            r.complete_message(d)
            self.assertEqual(r.peek_messages(max_message_count=1, sequence_number=seq), [])
            # A sequence number that is not deferred (any more) is refused.
            with self.assertRaises(ServiceBusError) as cm:
                r.receive_deferred_messages([seq])
            self.assertIn(str(seq), str(cm.exception))

    def test_defer_then_dead_letter(self):
        self.send("pym-defer-dl", ServiceBusMessage("x", message_id="pdl-1"))
        with self.client.get_queue_receiver("pym-defer-dl", max_wait_time=WAIT) as r:
            [m] = self.receive_exact(r, 1)
            seq = m.sequence_number
            r.defer_message(m)
            [d] = r.receive_deferred_messages(seq)
            r.dead_letter_message(d, reason="PyWhy", error_description="py because")
            self.assertEqual(r.peek_messages(max_message_count=1, sequence_number=seq), [])
        with self.client.get_queue_receiver("pym-defer-dl", sub_queue=ServiceBusSubQueue.DEAD_LETTER,
                                            max_wait_time=WAIT) as dlq:
            [x] = dlq.peek_messages(max_message_count=1, sequence_number=seq)
            self.assertEqual(x.message_id, "pdl-1")
            self.assertEqual(x.dead_letter_reason, "PyWhy")
            self.assertEqual(x.dead_letter_error_description, "py because")

    def test_receive_deferred_receive_and_delete(self):
        self.send("pym-defer-rnd", ServiceBusMessage("gone", message_id="prd-1"))
        with self.client.get_queue_receiver("pym-defer-rnd", max_wait_time=WAIT) as r:
            [m] = self.receive_exact(r, 1)
            seq = m.sequence_number
            r.defer_message(m)
        with self.client.get_queue_receiver("pym-defer-rnd", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE,
                                            max_wait_time=WAIT) as r:
            [d] = r.receive_deferred_messages([seq])
            self.assertEqual(d.message_id, "prd-1")
            self.assertEqual(body(d), b"gone")
            self.assertEqual(r.peek_messages(max_message_count=1, sequence_number=seq), [])

    def test_renew_message_lock(self):
        self.send("pym-renew", ServiceBusMessage("r", message_id="pr-1"))
        # Sleeps stay short: a uamqp 1.5.3 connection that nobody pumps for ~4.5 s
        # tends to end in a CBS error on the client side (a JS test covers outliving
        # the first lock).
        with self.client.get_queue_receiver("pym-renew", max_wait_time=WAIT) as r:
            [m] = self.receive_exact(r, 1)
            first = aware(m.locked_until_utc)
            time.sleep(2)
            renewed = aware(r.renew_message_lock(m))
            self.assertGreaterEqual((renewed - first).total_seconds(), 1.5)
            self.assertLess(abs((renewed - utcnow()).total_seconds() - LOCK_SECONDS), 1.5)
            self.assertEqual(aware(m.locked_until_utc), renewed)
            r.complete_message(m)
            self.assertEqual(r.peek_messages(max_message_count=1, sequence_number=m.sequence_number), [])

if __name__ == "__main__":
    unittest.main()
