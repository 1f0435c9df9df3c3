"""Transactions through a raw AMQP 1.0 client that sends what the .NET SDK sends (txn_client.py;
the JS and Python SDKs have no transactions): declare and discharge on a coordinator link;
sends, settlements and $management update-disposition that carry transactional-state; commit,
rollback, cross-entity work on one session, send-via, a lost lock failing the commit, the
100-operation limit, unknown transaction ids, and a connection that ends mid-transaction.

Run with /usr/bin/python3 (see run.py); this module has its own emulator.
"""
import json
import os
import sys
import time
import urllib.request
import unittest
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import start_module_emulator, stop_module_emulator  # noqa: E402
from txn_client import ACCEPTED, MODIFIED, REJECTED, TXN_STATE, RawClient  # noqa: E402

from proton import Delivery, Described, Message, symbol, timestamp, ulong  # noqa: E402

QUEUES = ["tx-commit", "tx-rollback", "tx-src", "tx-dst", "tx-lock-b", "tx-via", "tx-via-dest", "tx-limit",
          "tx-conn", "tx-coord", "tx-kinds", {"name": "tx-dl-src", "properties": {"ForwardDeadLetteredMessagesTo": "tx-dlt"}}, "tx-mgmt", "tx-unknown", "tx-symbolic", "tx-sched",
          {"name": "tx-lock", "properties": {"LockDuration": "PT5S"}}]
TOPICS = [{"name": "tx-topic", "subscriptions": [{"name": "s1"}, {"name": "s2"}]},
          {"name": "tx-dlt", "subscriptions": [{"name": "all"}]}]
emu = None


def setUpModule():
    global emu
    emu = start_module_emulator(QUEUES, "tx", TOPICS)


def tearDownModule():
    stop_module_emulator(emu)


def counts(entity):
    """(active, dead-lettered) from the emulator's database."""
    out = emu.psql("SELECT count(*) FILTER (WHERE m.subqueue = 0), count(*) FILTER (WHERE m.subqueue = 1)"
                   " FROM messages m JOIN entities e ON e.id = m.entity_id WHERE e.path = '%s'" % entity)
    a, d = out.strip().split("|")
    return int(a), int(d)


def lock_token(d):
    """The lock token a delivery tag carries (.NET Guid byte order)."""
    tag = d.tag.encode("utf-8", "surrogateescape") if isinstance(d.tag, str) else bytes(d.tag)
    return uuid.UUID(bytes_le=tag)


class TxnTest(unittest.TestCase):

    def setUp(self):
        self.c = RawClient(emu.amqp_port)

    def tearDown(self):
        self.c.close()

    def run(self, result=None):
        before = len(result.failures) + len(result.errors) if result else 0
        out = super().run(result)
        if result and len(result.failures) + len(result.errors) > before:
            emu.failed = True
            sys.stdout.write("\n" + (result.failures + result.errors)[-1][1])
            emu.dump_log(self.id())
        return out

    def bodies(self, address, n, credit=20):
        r = self.c.receiver(address, credit)
        got = self.c.receive(r, n)
        for d in got:
            self.c.settle(d, ACCEPTED)
        return [d.message.body for d in got]

    def assert_txn_state(self, answer, txn, outcome=ACCEPTED):
        state, data, cond = answer
        self.assertEqual(state, TXN_STATE, "answered %s %s" % (state, cond))
        self.assertEqual(bytes(data[0]), txn)
        self.assertEqual(data[1].descriptor, ulong(outcome))

    def test_commit_makes_sends_visible_only_then(self):
        s = self.c.sender("tx-commit")
        txn = self.c.declare()
        self.assertEqual(len(txn), 8)
        for i in range(3):
            self.assert_txn_state(self.c.send(s, Message(id="c%d" % i, body="c%d" % i), txn), txn)
        self.assertEqual(counts("tx-commit"), (0, 0), "nothing is stored before the commit")
        self.assertEqual(self.c.discharge(txn), (True, None))
        self.assertEqual(self.bodies("tx-commit", 3), ["c0", "c1", "c2"])

    def test_rollback_drops_sends(self):
        s = self.c.sender("tx-rollback")
        txn = self.c.declare()
        self.c.send(s, Message(id="r1", body="never"), txn)
        self.assertEqual(self.c.discharge(txn, fail=True), (True, None))
        self.c.send(s, Message(id="r2", body="after"))
        self.assertEqual(self.bodies("tx-rollback", 1), ["after"])
        self.assertEqual(counts("tx-rollback"), (0, 0))

    def test_cross_entity_complete_on_a_send_to_b(self):
        """One session, coordinator first (.NET EnableCrossEntityTransactions): complete on A and send
        to B commit together; a rollback leaves A's message locked (not redelivered) and B empty."""
        self.c.open_coordinator()
        src = self.c.sender("tx-src")
        self.c.send(src, Message(id="in", body="work"))
        r = self.c.receiver("tx-src", 5)
        [d] = self.c.receive(r, 1)
        dst = self.c.sender("tx-dst")
        txn = self.c.declare()
        self.assert_txn_state(self.c.settle(d, ACCEPTED, txn), txn)
        self.c.send(dst, Message(id="out", body="result"), txn)
        self.assertEqual(self.c.discharge(txn, fail=True), (True, None))
        self.assertEqual(counts("tx-src"), (1, 0), "rolled back: the message is still there")
        self.assertEqual(counts("tx-dst"), (0, 0))
        locked = emu.psql("SELECT count(*) FROM messages m JOIN entities e ON e.id = m.entity_id"
                          " WHERE e.path = 'tx-src' AND m.lock_token IS NOT NULL").strip()
        self.assertEqual(locked, "1", "the lock is kept after a rollback")
        # the delivery was settled by the first try: .NET completes by lock token on $management then
        txn = self.c.declare()
        resp = self.c.mgmt("tx-src", "com.microsoft:update-disposition",
                           {"lock-tokens": [lock_token(d)], "disposition-status": "completed"}, txn)
        self.assertEqual(resp.properties["statusCode"], 200, resp.properties)
        self.c.send(dst, Message(id="out", body="result"), txn)
        self.assertEqual(counts("tx-src"), (1, 0))
        self.assertEqual(self.c.discharge(txn), (True, None))
        self.assertEqual(counts("tx-src"), (0, 0))
        self.assertEqual(self.bodies("tx-dst", 1), ["result"])

    def test_send_via_lands_in_the_destination_on_commit(self):
        s = self.c.sender("tx-via", {symbol("com.microsoft:transfer-destination-address"): "tx-via-dest"})
        txn = self.c.declare()
        self.assert_txn_state(self.c.send(s, Message(id="v1", body="via"), txn), txn)
        self.assertEqual(counts("tx-via-dest"), (0, 0))
        self.assertEqual(self.c.discharge(txn), (True, None))
        self.assertEqual(counts("tx-via"), (0, 0))
        self.assertEqual(self.bodies("tx-via-dest", 1), ["via"])

    def test_a_lost_lock_fails_the_commit_and_nothing_happens(self):
        s = self.c.sender("tx-lock")
        self.c.send(s, Message(id="l1", body="x"))
        r = self.c.receiver("tx-lock", 1)
        [d] = self.c.receive(r, 1)
        b = self.c.sender("tx-lock-b")
        txn = self.c.declare()
        self.c.settle(d, ACCEPTED, txn)
        self.c.send(b, Message(id="lb", body="y"), txn)
        time.sleep(6)  # LockDuration PT5S
        ok, cond = self.c.discharge(txn)
        self.assertFalse(ok)
        self.assertEqual(cond.name, "com.microsoft:message-lock-lost", cond)
        self.assertEqual(counts("tx-lock-b"), (0, 0), "the send was rolled back with the complete")
        self.assertEqual(counts("tx-lock"), (1, 0), "the message was not completed")

    def test_the_101st_operation_is_refused_and_dooms_the_transaction(self):
        s = self.c.sender("tx-limit")
        txn = self.c.declare()
        for i in range(100):
            self.assert_txn_state(self.c.send(s, Message(id="n%d" % i, body=i), txn), txn)
        state, _, cond = self.c.send(s, Message(id="n100", body=100), txn)
        self.assertEqual(state, Delivery.REJECTED)
        self.assertEqual(cond.name, "amqp:resource-limit-exceeded")
        self.assertIn("100", cond.description)
        ok, cond = self.c.discharge(txn)
        self.assertFalse(ok)
        self.assertEqual(counts("tx-limit"), (0, 0))

    def test_unknown_transaction_id_is_refused(self):
        s = self.c.sender("tx-unknown")
        state, _, cond = self.c.send(s, Message(id="u", body="u"), b"\x00\x00\x00\x00\x09\x09\x09\x09")
        self.assertEqual(state, Delivery.REJECTED)
        self.assertEqual(cond.name, "amqp:transaction:unknown-id")
        self.c.open_coordinator()
        ok, cond = self.c.discharge(b"nonesuch")
        self.assertFalse(ok)
        self.assertEqual(cond.name, "amqp:transaction:unknown-id")
        self.assertEqual(counts("tx-unknown"), (0, 0))

    def test_a_transaction_ends_with_its_connection(self):
        s = self.c.sender("tx-conn")
        txn = self.c.declare()
        self.c.send(s, Message(id="k", body="lost"), txn)
        self.c.close()
        self.c = RawClient(emu.amqp_port)
        s = self.c.sender("tx-conn")
        self.c.send(s, Message(id="k2", body="kept"))
        self.assertEqual(self.bodies("tx-conn", 1), ["kept"])

    def test_closing_the_coordinator_rolls_back_its_transactions(self):
        # Service Bus ends a transaction with the coordinator link that declared it: what it
        # sent is dropped, and its txn-id is unknown from then on (a send on it is refused).
        s = self.c.sender("tx-coord")
        txn = self.c.declare()
        self.assert_txn_state(self.c.send(s, Message(id="k1", body="rolled back"), txn), txn)
        coord = self.c.coordinator
        coord.close()
        self.c._wait(lambda: coord.state & coord.REMOTE_CLOSED, "the coordinator's detach")
        self.c.coordinator = None
        state, _, cond = self.c.send(s, Message(id="k2", body="too late"), txn)
        self.assertEqual(state, Delivery.REJECTED, "a send on the closed coordinator's transaction")
        self.assertEqual(cond.name, "amqp:transaction:unknown-id")
        self.c.open_coordinator()
        ok, cond = self.c.discharge(txn)
        self.assertFalse(ok, "a discharge of the rolled-back transaction on a new coordinator")
        self.assertEqual(cond.name, "amqp:transaction:unknown-id")
        self.c.send(s, Message(id="k3", body="kept"))
        self.assertEqual(self.bodies("tx-coord", 1), ["kept"])
        self.assertEqual(counts("tx-coord"), (0, 0))

    def test_abandon_dead_letter_and_defer_in_a_transaction(self):
        s = self.c.sender("tx-kinds")
        for i in range(3):
            self.c.send(s, Message(id="k%d" % i, body="k%d" % i))
        r = self.c.receiver("tx-kinds", 3)
        d = self.c.receive(r, 3)
        txn = self.c.declare()
        self.assert_txn_state(self.c.settle(d[0], MODIFIED, txn, [False, False]), txn, MODIFIED)
        dl = Described(ulong(0x1d), [symbol("com.microsoft:dead-letter"), "desc",
                                     {symbol("DeadLetterReason"): "why", symbol("DeadLetterErrorDescription"): "how"}])
        self.assert_txn_state(self.c.settle(d[1], REJECTED, txn, [dl]), txn, REJECTED)
        self.assert_txn_state(self.c.settle(d[2], MODIFIED, txn, [False, True]), txn, MODIFIED)
        self.assertEqual(counts("tx-kinds"), (3, 0))
        self.assertEqual(self.c.discharge(txn), (True, None))
        self.assertEqual(counts("tx-kinds"), (2, 1))
        row = emu.psql("SELECT m.message_id, m.state, m.delivery_count, coalesce(m.dead_letter_reason, ''),"
                       " coalesce(m.dead_letter_error_description, '') FROM messages m JOIN entities e"
                       " ON e.id = m.entity_id WHERE e.path = 'tx-kinds' ORDER BY m.message_id")
        self.assertEqual([l.strip() for l in row.strip().splitlines()],
                         ["k0|0|1||", "k1|0|1|why|how", "k2|1|1||"])

    def test_a_dead_letter_in_a_transaction_reaches_a_forward_topic_at_once(self):
        # ForwardDeadLetteredMessagesTo a topic: the commit routes the dead letter at once (it
        # used to wait for the periodic topic pump, up to 5 s). Three in a row, each within 1 s.
        s = self.c.sender("tx-dl-src")
        sub = self.c.receiver("tx-dlt/Subscriptions/all", 10)
        for i in range(3):
            self.c.send(s, Message(id="dl%d" % i, body="dl%d" % i))
            r = self.c.receiver("tx-dl-src", 1)
            [d] = self.c.receive(r, 1)
            txn = self.c.declare()
            dl = Described(ulong(0x1d), [symbol("com.microsoft:dead-letter"), "desc",
                                         {symbol("DeadLetterReason"): "InTxn"}])
            self.assert_txn_state(self.c.settle(d, REJECTED, txn, [dl]), txn, REJECTED)
            self.assertEqual(self.c.discharge(txn), (True, None))
            t0 = time.monotonic()
            [got] = self.c.receive(sub, 1)
            ms = (time.monotonic() - t0) * 1000
            self.assertEqual(got.message.id, "dl%d" % i)
            self.assertEqual(got.message.properties.get("DeadLetterReason"), "InTxn")
            self.assertLess(ms, 1000, "dl%d reached the subscription %.0f ms after the commit" % (i, ms))
            self.c.settle(got, ACCEPTED)
            r.close()

    def test_update_disposition_on_management_in_a_transaction(self):
        s = self.c.sender("tx-mgmt")
        self.c.send(s, Message(id="m", body="m"))
        r = self.c.receiver("tx-mgmt", 1)
        [d] = self.c.receive(r, 1)
        token = lock_token(d)
        txn = self.c.declare()
        resp = self.c.mgmt("tx-mgmt", "com.microsoft:update-disposition",
                           {"lock-tokens": [token], "disposition-status": "completed"}, txn)
        self.assertEqual(resp.properties["statusCode"], 200, resp.properties)
        self.assertEqual(counts("tx-mgmt"), (1, 0))
        resp = self.c.mgmt("tx-mgmt", "com.microsoft:peek-message",
                           {"from-sequence-number": 1, "message-count": 1}, txn)
        self.assertEqual(resp.properties["statusCode"], 501, "peek cannot join a transaction")
        self.assertEqual(self.c.discharge(txn), (True, None))
        self.assertEqual(counts("tx-mgmt"), (0, 0))

    def test_schedule_message_in_a_transaction(self):
        """schedule-message answers its sequence numbers at once; the message is invisible (peek shows
        nothing) until the commit makes it scheduled; a rolled-back schedule leaves nothing behind."""
        def schedule(txn, mid):
            body = Message(id=mid, body="later", annotations={symbol("x-opt-scheduled-enqueue-time"):
                                                               timestamp(int(time.time() * 1000) + 3600000)})
            resp = self.c.mgmt("tx-sched", "com.microsoft:schedule-message",
                               {"messages": [{"message-id": mid, "message": body.encode()}]}, txn)
            self.assertEqual(resp.properties["statusCode"], 200, resp.properties)
            return list(resp.body["sequence-numbers"])

        def peek():
            resp = self.c.mgmt("tx-sched", "com.microsoft:peek-message",
                               {"from-sequence-number": 1, "message-count": 10})
            return resp.properties["statusCode"], resp.body

        txn = self.c.declare()
        [seq] = schedule(txn, "s1")
        self.assertGreater(seq, 0)
        self.assertEqual(peek()[0], 204, "not visible before the commit")
        self.assertEqual(self.c.discharge(txn), (True, None))
        status, body = peek()
        self.assertEqual(status, 200)
        self.assertEqual(len(body["messages"]), 1)
        row = emu.psql("SELECT m.sequence_number, m.state FROM messages m JOIN entities e ON e.id = m.entity_id"
                       " WHERE e.path = 'tx-sched'").strip()
        self.assertEqual(row, "%d|2" % seq)
        txn = self.c.declare()
        schedule(txn, "s2")
        self.assertEqual(counts("tx-sched"), (2, 0), "stored at once, invisible")
        self.assertEqual(self.c.discharge(txn, fail=True), (True, None))
        deadline = time.monotonic() + 5
        while counts("tx-sched") != (1, 0) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(counts("tx-sched"), (1, 0), "a rollback deletes what the transaction scheduled")

    def test_a_topic_send_in_a_transaction_fans_out_on_commit(self):
        s = self.c.sender("tx-topic")
        txn = self.c.declare()
        self.assert_txn_state(self.c.send(s, Message(id="t", body="fan"), txn), txn)
        self.assertEqual(counts("tx-topic/Subscriptions/s1"), (0, 0))
        self.assertEqual(self.c.discharge(txn), (True, None))
        self.assertEqual(self.bodies("tx-topic/Subscriptions/s1", 1), ["fan"])
        self.assertEqual(self.bodies("tx-topic/Subscriptions/s2", 1), ["fan"])

    def test_symbolic_descriptors_as_proton_sends_them(self):
        """Proton's own clients name declare and discharge by symbol (amqp:declare:list)."""
        c = self.c
        c.open_coordinator()
        dlv = c._transfer(c.coordinator, Message(body=Described(symbol("amqp:declare:list"), [None])))
        self.assertEqual(dlv.remote_state, 0x33)
        txn = bytes(dlv.remote.data[0])
        dlv.settle()
        s = c.sender("tx-symbolic")
        c.send(s, Message(id="y", body="sym"), txn)
        dlv = c._transfer(c.coordinator, Message(body=Described(symbol("amqp:discharge:list"), [txn, False])))
        self.assertEqual(dlv.remote_state, Delivery.ACCEPTED)
        dlv.settle()
        self.assertEqual(self.bodies("tx-symbolic", 1), ["sym"])


if __name__ == "__main__":
    unittest.main()
