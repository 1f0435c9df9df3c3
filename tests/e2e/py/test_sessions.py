"""Sessions through Debian's azure-servicebus 7.8.2 (uamqp) over AMQPS on 5671: a named
session's messages in order and only its own, NEXT_AVAILABLE_SESSION (the oldest session
with a message nobody holds), one holder at a time, session state, renew_lock, complete
and abandon in a session (MaxDeliveryCount dead-letters, the DLQ has no sessions), peek
within a session, a session subscription, and the refusals (a send without SessionId, a
non-session receiver on a session queue, a session receiver on a plain queue).

7.8.2 sends no com.microsoft:timeout on a next-available receiver's attach, so the
emulator would wait its default 65 s when no session is free: no test here asks for a
session that is not there. Time moves through the emulator's clock (POST
/$sbemu/clock/advance), never by sleeping out a lock.

Run with /usr/bin/python3 (see run.py); this module has its own emulator.
"""
import datetime
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import EmulatorTestCase, body, start_module_emulator, stop_module_emulator, text  # noqa: E402

from azure.servicebus import (  # noqa: E402
    NEXT_AVAILABLE_SESSION,
    ServiceBusMessage,
    ServiceBusReceiveMode,
    ServiceBusSubQueue,
)
from azure.servicebus.exceptions import ServiceBusError, SessionCannotBeLockedError  # noqa: E402

WAIT = 3  # seconds: max_wait_time of receives that expect something
QUIET = 1  # seconds: max_wait_time of receives that expect nothing
S = {"RequiresSession": True}
QUEUES = [
    {"name": "py-s-basic", "properties": S},
    {"name": "py-s-next", "properties": S},
    {"name": "py-s-hold", "properties": S},
    {"name": "py-s-state", "properties": S},
    {"name": "py-s-lock", "properties": dict(S, LockDuration="PT30S")},
    {"name": "py-s-settle", "properties": S},
    {"name": "py-s-abandon", "properties": dict(S, MaxDeliveryCount=2)},
    {"name": "py-s-peek", "properties": S},
    {"name": "py-s-refuse", "properties": S},
    {"name": "py-s-list", "properties": S},
    {"name": "py-plain"},
]
TOPICS = [{"name": "py-s-topic", "subscriptions": [{"name": "sess", "properties": S}, {"name": "all"}]}]

EMU = None


def setUpModule():
    global EMU
    EMU = start_module_emulator(QUEUES, "py-sessions", topics=TOPICS)
    SessionsTestCase.emu = EMU


def tearDownModule():
    stop_module_emulator(EMU)


def utc(d):
    """The SDK's datetimes are naive UTC or aware; make them aware."""
    return d if d.tzinfo else d.replace(tzinfo=datetime.timezone.utc)


def sbody(m):
    return "%s:%s" % (text(m.session_id), body(m).decode())


class SessionsTestCase(EmulatorTestCase):

    def receive_exact(self, receiver, n, timeout=15):
        got = []
        deadline = time.monotonic() + timeout
        while len(got) < n and time.monotonic() < deadline:
            got += receiver.receive_messages(max_message_count=n - len(got), max_wait_time=WAIT)
        self.assertEqual(len(got), n, "expected %d message(s), got %s" % (n, [sbody(m) for m in got]))
        return got

    def expect_nothing(self, receiver, what):
        got = receiver.receive_messages(max_message_count=5, max_wait_time=QUIET)
        self.assertEqual([sbody(m) for m in got], [], "%s: expected no message" % what)

    def assert_locked_until(self, receiver, lock_seconds, what):
        """The session lock the attach reported (ticks) is the emulator's now + LockDuration."""
        until = receiver.session.locked_until_utc
        self.assertIsNotNone(until, "%s: the attach carried no com.microsoft:locked-until-utc" % what)
        expected = EMU.clock_now() + datetime.timedelta(seconds=lock_seconds)
        self.assertLess(abs((utc(until) - expected).total_seconds()), 5,
                        "%s: session locked until %s, expected about %s" % (what, until, expected))


class TestSessions(SessionsTestCase):

    def test_01_named_session_in_order_and_only_its_own(self):
        self.send("py-s-basic",
                  ServiceBusMessage("a1", session_id="A"), ServiceBusMessage("b1", session_id="B"),
                  ServiceBusMessage("a2", session_id="A"), ServiceBusMessage("a3", session_id="A"),
                  ServiceBusMessage("b2", session_id="B"))
        with self.client.get_queue_receiver("py-s-basic", session_id="A", max_wait_time=WAIT) as r:
            got = self.receive_exact(r, 3)
            self.assertEqual(r.session.session_id, "A")
            self.assertEqual([sbody(m) for m in got], ["A:a1", "A:a2", "A:a3"])
            self.assertEqual([m.delivery_count for m in got], [0, 0, 0])
            seqs = [m.sequence_number for m in got]
            self.assertEqual(seqs, sorted(seqs), "sequence numbers within a session ascend: %r" % seqs)
            self.assert_locked_until(r, 60, "session A")
            for m in got:
                r.complete_message(m)
            self.expect_nothing(r, "session A after its three")
        with self.client.get_queue_receiver("py-s-basic", session_id="B", max_wait_time=WAIT,
                                            receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
            self.assertEqual([sbody(m) for m in self.receive_exact(r, 2)], ["B:b1", "B:b2"])
            self.expect_nothing(r, "session B after receive-and-delete")
        # completed and deleted: session A is empty for a new receiver too
        with self.client.get_queue_receiver("py-s-basic", session_id="A", max_wait_time=WAIT) as r:
            self.expect_nothing(r, "session A, reopened")

    def test_02_next_available_takes_the_oldest_free_session(self):
        # separate sends: n2 is older than n1 although it sorts after it
        self.send("py-s-next", ServiceBusMessage("x", session_id="n2"))
        self.send("py-s-next", ServiceBusMessage("y", session_id="n1"))
        first = self.client.get_queue_receiver("py-s-next", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=WAIT)
        second = self.client.get_queue_receiver("py-s-next", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=WAIT)
        try:
            [m1] = self.receive_exact(first, 1)
            self.assertEqual((first.session.session_id, sbody(m1)), ("n2", "n2:x"))
            # n2 is held: the next one gets n1
            [m2] = self.receive_exact(second, 1)
            self.assertEqual((second.session.session_id, sbody(m2)), ("n1", "n1:y"))
            second.complete_message(m2)
        finally:
            first.close()  # m1 unsettled: closing lets session n2 (and its message) go
            second.close()
        with self.client.get_queue_receiver("py-s-next", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=WAIT) as r:
            [m] = self.receive_exact(r, 1)
            # closing a session unsettled is no delivery (Service Bus: "Impact of delivery count")
            self.assertEqual((r.session.session_id, sbody(m), m.delivery_count), ("n2", "n2:x", 0))
            r.complete_message(m)

    def test_03_a_held_session_cannot_be_accepted_by_another(self):
        self.send("py-s-hold", ServiceBusMessage("h", session_id="H"))
        with self.client.get_queue_receiver("py-s-hold", session_id="H", max_wait_time=WAIT) as h:
            self.assertEqual([sbody(m) for m in h.peek_messages(5)], ["H:h"])  # attached and holding
            with self.assertRaises(ServiceBusError) as cm:
                with self.client.get_queue_receiver("py-s-hold", session_id="H", max_wait_time=WAIT) as other:
                    other.receive_messages(max_message_count=1, max_wait_time=WAIT)
            self.assertIsInstance(cm.exception, SessionCannotBeLockedError,
                                  "expected SessionCannotBeLockedError, got %s: %s"
                                  % (type(cm.exception).__name__, cm.exception))
        with self.client.get_queue_receiver("py-s-hold", session_id="H", max_wait_time=WAIT) as again:
            [m] = self.receive_exact(again, 1)
            self.assertEqual(sbody(m), "H:h")
            again.complete_message(m)

    def test_04_session_state_kept_across_receivers_and_cleared_with_none(self):
        with self.client.get_queue_receiver("py-s-state", session_id="st", max_wait_time=WAIT) as r:
            self.assertIsNone(r.session.get_state(), "a new session has no state")
            r.session.set_state(b"step-1\x00\xff")
            self.assertEqual(bytes(r.session.get_state()), b"step-1\x00\xff")
            r.session.set_state("step-2")  # a str is sent UTF-8 encoded
            self.assertEqual(bytes(r.session.get_state()), b"step-2")
        with self.client.get_queue_receiver("py-s-state", session_id="st", max_wait_time=WAIT) as r:
            self.assertEqual(bytes(r.session.get_state()), b"step-2", "state outlives its receiver")
            r.session.set_state(None)
            self.assertIsNone(r.session.get_state(), "set_state(None) clears it")
        with self.client.get_queue_receiver("py-s-state", session_id="other", max_wait_time=WAIT) as r:
            self.assertIsNone(r.session.get_state(), "state belongs to its own session")
        with self.client.get_queue_receiver("py-s-state", session_id="st", max_wait_time=WAIT) as r:
            self.assertIsNone(r.session.get_state(), "cleared state stays cleared")

    def test_05_renew_lock_extends_the_session_lock(self):
        self.send("py-s-lock", ServiceBusMessage("l", session_id="L"))
        with self.client.get_queue_receiver("py-s-lock", session_id="L", max_wait_time=WAIT) as r:
            [m] = self.receive_exact(r, 1)
            self.assert_locked_until(r, 30, "on attach")
            before = utc(r.session.locked_until_utc)
            EMU.advance("PT10S")
            renewed = utc(r.session.renew_lock())
            self.assertGreaterEqual((renewed - before).total_seconds(), 9,
                                    "renewed to %s from %s after 10 s" % (renewed, before))
            self.assertEqual(utc(r.session.locked_until_utc), renewed, "the session object keeps the renewal")
            self.assert_locked_until(r, 30, "after renew")
            # 25 s on: past the first lock, within the renewed one; the session still settles
            EMU.advance("PT25S")
            r.complete_message(m)
            self.expect_nothing(r, "after complete")

    def test_06_complete_and_abandon_in_a_session(self):
        self.send("py-s-settle", ServiceBusMessage("c", session_id="C", message_id="c1"),
                  ServiceBusMessage("a", session_id="C", message_id="a1"))
        with self.client.get_queue_receiver("py-s-settle", session_id="C", max_wait_time=WAIT) as r:
            first, second = self.receive_exact(r, 2)
            self.assertEqual([first.message_id, second.message_id], ["c1", "a1"])
            r.complete_message(first)
            r.abandon_message(second)
            [again] = self.receive_exact(r, 1)
            self.assertEqual((again.message_id, again.session_id, again.delivery_count), ("a1", "C", 1))
            r.complete_message(again)
            self.expect_nothing(r, "both completed")

    def test_07_abandon_past_max_delivery_count_dead_letters(self):
        self.send("py-s-abandon", ServiceBusMessage("x", session_id="ab", message_id="ab1"))
        with self.client.get_queue_receiver("py-s-abandon", session_id="ab", max_wait_time=WAIT) as r:
            [m] = self.receive_exact(r, 1)
            self.assertEqual(m.delivery_count, 0)
            r.abandon_message(m)
            [m] = self.receive_exact(r, 1)
            self.assertEqual(m.delivery_count, 1)
            r.abandon_message(m)  # the second delivery of MaxDeliveryCount 2
            self.expect_nothing(r, "after MaxDeliveryCount")
        with self.client.get_queue_receiver("py-s-abandon", sub_queue=ServiceBusSubQueue.DEAD_LETTER,
                                            max_wait_time=WAIT) as d:
            [m] = self.receive_exact(d, 1)
            self.assertEqual((m.message_id, m.session_id, body(m), m.dead_letter_reason),
                             ("ab1", "ab", b"x", "MaxDeliveryCountExceeded"))
            d.complete_message(m)

    def test_08_peek_on_a_session_receiver_shows_only_its_session(self):
        self.send("py-s-peek", ServiceBusMessage("p1", session_id="P"), ServiceBusMessage("q1", session_id="Q"),
                  ServiceBusMessage("p2", session_id="P"), ServiceBusMessage("q2", session_id="Q"))
        with self.client.get_queue_receiver("py-s-peek", session_id="P", max_wait_time=WAIT) as r:
            self.assertEqual([sbody(m) for m in r.peek_messages(max_message_count=10)], ["P:p1", "P:p2"])
            # peeking locks nothing: both still arrive
            self.assertEqual([sbody(m) for m in self.receive_exact(r, 2)], ["P:p1", "P:p2"])
        with self.client.get_queue_receiver("py-s-peek", session_id="Q", max_wait_time=WAIT) as r:
            self.assertEqual([sbody(m) for m in r.peek_messages(max_message_count=10)], ["Q:q1", "Q:q2"])

    def test_09_session_subscription(self):
        with self.client.get_topic_sender("py-s-topic") as s:
            s.send_messages([ServiceBusMessage("with", session_id="T1"), ServiceBusMessage("without"),
                             ServiceBusMessage("other", session_id="T2")])
        with self.client.get_subscription_receiver("py-s-topic", "sess", session_id="T1", max_wait_time=WAIT) as r:
            self.assertEqual(r.session.session_id, "T1")
            [m] = self.receive_exact(r, 1)
            self.assertEqual(sbody(m), "T1:with")
            r.complete_message(m)
            self.expect_nothing(r, "session subscription: the copy without SessionId does not go there")
        # T1 is empty now: next-available on the subscription finds T2
        with self.client.get_subscription_receiver("py-s-topic", "sess", session_id=NEXT_AVAILABLE_SESSION,
                                                   max_wait_time=WAIT) as r:
            [m] = self.receive_exact(r, 1)
            self.assertEqual((r.session.session_id, sbody(m)), ("T2", "T2:other"))
            r.complete_message(m)
        with self.client.get_subscription_receiver("py-s-topic", "all", max_wait_time=WAIT,
                                                   receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
            got = self.receive_exact(r, 3)
            self.assertEqual(sorted((body(m), m.session_id) for m in got),
                             [(b"other", "T2"), (b"with", "T1"), (b"without", None)])

    def test_10_send_without_session_id_is_refused(self):
        with self.assertRaises(ServiceBusError) as cm:
            self.send("py-s-refuse", ServiceBusMessage("no session"))
        self.assertIn("SessionId was not set", str(cm.exception),
                      "%s: %s" % (type(cm.exception).__name__, cm.exception))
        with self.client.get_queue_receiver("py-s-refuse", session_id="any", max_wait_time=WAIT) as r:
            self.assertEqual(r.peek_messages(max_message_count=10), [], "nothing was stored")

    def test_11_receivers_of_the_wrong_kind_are_refused(self):
        with self.assertRaises(ServiceBusError) as cm:
            with self.client.get_queue_receiver("py-s-refuse", max_wait_time=WAIT) as r:
                r.receive_messages(max_message_count=1, max_wait_time=WAIT)
        self.assertIn("requires sessions", str(cm.exception),
                      "non-session receiver: %s: %s" % (type(cm.exception).__name__, cm.exception))
        with self.assertRaises(ServiceBusError) as cm:
            with self.client.get_queue_receiver("py-plain", session_id="x", max_wait_time=WAIT) as r:
                r.receive_messages(max_message_count=1, max_wait_time=WAIT)
        self.assertIn("does not require sessions", str(cm.exception),
                      "session receiver on a plain queue: %s: %s" % (type(cm.exception).__name__, cm.exception))


class MessageSessionsTest(SessionsTestCase):
    """com.microsoft:get-message-sessions (no SDK here exposes it: a raw client asks)."""

    def test_get_message_sessions_pages_in_id_order(self):
        from proton import timestamp
        from txn_client import RawClient
        with self.client.get_queue_sender("py-s-list") as s:
            s.send_messages([ServiceBusMessage("x", session_id=sid) for sid in ("g2", "g1", "g3", "g1")])
        c = RawClient(self.emu.amqp_port)
        try:
            def page(skip, top):
                resp = c.mgmt("py-s-list", "com.microsoft:get-message-sessions",
                              {"last-updated-time": timestamp(0), "skip": skip, "top": top})
                return resp.properties["statusCode"], resp.body
            status, body = page(0, 2)
            self.assertEqual(status, 200)
            self.assertEqual(list(body["sessions-ids"]), ["g1", "g2"])
            self.assertEqual(body["skip"], 2)
            status, body = page(2, 2)
            self.assertEqual((status, list(body["sessions-ids"])), (200, ["g3"]))
            self.assertEqual(page(3, 2)[0], 204)
        finally:
            c.close()
