"""Peek-lock settlement through azure-servicebus 7.15, sync and aio: complete, abandon, defer and
receive_deferred_messages, dead_letter_message with reason and description and the dead-letter
subqueue, renew_message_lock, a lost lock (LockDuration PT5S and the emulator's clock), peek from a
sequence number."""
import datetime

import pytest
from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusReceiveMode, ServiceBusSubQueue
from azure.servicebus.aio import ServiceBusClient as AsyncServiceBusClient
from azure.servicebus.exceptions import MessageAlreadySettled, MessageLockLostError, MessageNotFoundError

from conftest import body_bytes

SHORT = {"LockDuration": "PT5S"}
QUEUES = [
    "st-abandon", "st-defer", "st-dlq", "st-renew", {"name": "st-lost", "properties": SHORT}, "st-peek",
    "a-abandon", "a-defer", "a-dlq", "a-renew", {"name": "a-lost", "properties": SHORT}, "a-peek",
]


@pytest.fixture
def sb(emu):
    with ServiceBusClient.from_connection_string(emu.connection_string) as c:
        yield c


@pytest.fixture
async def asb(emu):
    async with AsyncServiceBusClient.from_connection_string(emu.connection_string) as c:
        yield c


def send(sb, queue, *bodies):
    with sb.get_queue_sender(queue) as s:
        s.send_messages([ServiceBusMessage(b, message_id=b) for b in bodies])


async def asend(sb, queue, *bodies):
    async with sb.get_queue_sender(queue) as s:
        await s.send_messages([ServiceBusMessage(b, message_id=b) for b in bodies])


def test_abandon_redelivers_with_delivery_count(sb):
    send(sb, "st-abandon", "ab")
    with sb.get_queue_receiver("st-abandon") as r:
        (m,) = r.receive_messages(max_wait_time=10)
        assert m.delivery_count == 0
        r.abandon_message(m)
        (m2,) = r.receive_messages(max_wait_time=10)
        assert m2.message_id == "ab" and m2.delivery_count == 1
        assert m2.sequence_number == m.sequence_number
        r.complete_message(m2)
        with pytest.raises(MessageAlreadySettled):
            r.complete_message(m2)  # the SDK knows it settled it
        assert r.receive_messages(max_wait_time=1) == []


def test_defer_and_receive_deferred_by_sequence_number(sb):
    send(sb, "st-defer", "d1", "d2", "keep")
    with sb.get_queue_receiver("st-defer") as r:
        got = r.receive_messages(max_message_count=3, max_wait_time=10)
        assert [m.message_id for m in got] == ["d1", "d2", "keep"]
        r.defer_message(got[0])
        r.defer_message(got[1])
        r.complete_message(got[2])
        assert r.receive_messages(max_wait_time=1) == [], "deferred messages are not received again"
        seqs = [got[0].sequence_number, got[1].sequence_number]
        peeked = r.peek_messages(max_message_count=5, sequence_number=seqs[0])
        assert [p.state.name for p in peeked] == ["DEFERRED", "DEFERRED"]
        deferred = r.receive_deferred_messages(seqs)
        assert sorted(m.message_id for m in deferred) == ["d1", "d2"]
        assert all(m.state.name == "DEFERRED" and m.locked_until_utc for m in deferred)
        for m in deferred:
            r.complete_message(m)
        assert r.peek_messages(max_message_count=5, sequence_number=seqs[0]) == []

def test_receive_deferred_of_a_message_not_deferred(emu):
    # the SDK retries MessageNotFoundError (three times, backing off): no retries here
    with ServiceBusClient.from_connection_string(emu.connection_string, retry_total=0) as sb:
        send(sb, "st-defer", "plain")
        with sb.get_queue_receiver("st-defer", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
            (m,) = r.receive_messages(max_wait_time=10)
            with pytest.raises(MessageNotFoundError):
                r.receive_deferred_messages([m.sequence_number])  # received and deleted
            with pytest.raises(MessageNotFoundError):
                r.receive_deferred_messages([987654])


def test_dead_letter_with_reason_and_the_subqueue(sb):
    send(sb, "st-dlq", "bad", "worse")
    with sb.get_queue_receiver("st-dlq") as r:
        a, b = r.receive_messages(max_message_count=2, max_wait_time=10)
        r.dead_letter_message(a, reason="Because", error_description="It had to")
        r.dead_letter_message(b)
        assert r.receive_messages(max_wait_time=1) == []
    with sb.get_queue_receiver("st-dlq", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as d:
        got = d.receive_messages(max_message_count=2, max_wait_time=10)
        assert [m.message_id for m in got] == ["bad", "worse"]
        assert got[0].dead_letter_reason == "Because"
        assert got[0].dead_letter_error_description == "It had to"
        assert got[0].sequence_number == a.sequence_number
        assert body_bytes(got[0]) == b"bad"
        assert got[1].dead_letter_reason is None
        for m in got:
            d.complete_message(m)
        assert d.receive_messages(max_wait_time=1) == []


def test_renew_message_lock(sb, emu):
    send(sb, "st-renew", "r")
    with sb.get_queue_receiver("st-renew") as r:
        (m,) = r.receive_messages(max_wait_time=10)
        first = m.locked_until_utc
        emu.advance("PT30S")  # half the PT1M lock gone
        renewed = r.renew_message_lock(m)
        assert renewed == m.locked_until_utc
        assert renewed - first >= datetime.timedelta(seconds=29), (first, renewed)
        emu.advance("PT45S")  # past the first lock, within the renewed one
        r.complete_message(m)


def test_lock_lost(sb, emu):
    send(sb, "st-lost", "lost", "lost2")
    with sb.get_queue_receiver("st-lost") as r:
        m, m2 = r.receive_messages(max_message_count=2, max_wait_time=10)
        emu.advance("PT10S")  # past LockDuration PT5S on the emulator's clock
        with pytest.raises(MessageLockLostError):
            r.complete_message(m)
        with pytest.raises(MessageLockLostError):
            r.renew_message_lock(m2)
        # both are back, delivery count up
        again = r.receive_messages(max_message_count=2, max_wait_time=10)
        assert sorted((x.message_id, x.delivery_count) for x in again) == [("lost", 1), ("lost2", 1)]
        for x in again:
            r.complete_message(x)


def test_peek_from_a_sequence_number(sb):
    send(sb, "st-peek", *["p%d" % i for i in range(6)])
    with sb.get_queue_receiver("st-peek") as r:
        all_ = r.peek_messages(max_message_count=10, sequence_number=1)
        assert [p.message_id for p in all_] == ["p%d" % i for i in range(6)]
        seqs = [p.sequence_number for p in all_]
        tail = r.peek_messages(max_message_count=10, sequence_number=seqs[3])
        assert [p.message_id for p in tail] == ["p3", "p4", "p5"]
        two = r.peek_messages(max_message_count=2, sequence_number=seqs[1])
        assert [p.message_id for p in two] == ["p1", "p2"]
        # peeking takes no lock and counts no delivery
        (m,) = r.receive_messages(max_wait_time=10)
        assert m.message_id == "p0" and m.delivery_count == 0
        r.complete_message(m)
        assert [p.message_id for p in r.peek_messages(max_message_count=10, sequence_number=1)] == \
            ["p1", "p2", "p3", "p4", "p5"]


# ---- aio ----

async def test_aio_abandon_complete(asb):
    await asend(asb, "a-abandon", "ab")
    async with asb.get_queue_receiver("a-abandon") as r:
        (m,) = await r.receive_messages(max_wait_time=10)
        await r.abandon_message(m)
        (m2,) = await r.receive_messages(max_wait_time=10)
        assert m2.delivery_count == 1
        await r.complete_message(m2)
        assert await r.receive_messages(max_wait_time=1) == []


async def test_aio_defer_and_receive_deferred(asb):
    await asend(asb, "a-defer", "d1", "d2")
    async with asb.get_queue_receiver("a-defer") as r:
        got = await r.receive_messages(max_message_count=2, max_wait_time=10)
        for m in got:
            await r.defer_message(m)
        deferred = await r.receive_deferred_messages([m.sequence_number for m in got])
        assert sorted(m.message_id for m in deferred) == ["d1", "d2"]
        for m in deferred:
            await r.complete_message(m)
        assert await r.peek_messages(max_message_count=5, sequence_number=1) == []


async def test_aio_dead_letter_and_subqueue(asb):
    await asend(asb, "a-dlq", "bad")
    async with asb.get_queue_receiver("a-dlq") as r:
        (m,) = await r.receive_messages(max_wait_time=10)
        await r.dead_letter_message(m, reason="R", error_description="D")
    async with asb.get_queue_receiver("a-dlq", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as d:
        (x,) = await d.receive_messages(max_wait_time=10)
        assert (x.message_id, x.dead_letter_reason, x.dead_letter_error_description) == ("bad", "R", "D")
        await d.complete_message(x)


async def test_aio_renew_and_lock_lost(asb, emu):
    await asend(asb, "a-renew", "r")
    async with asb.get_queue_receiver("a-renew") as r:
        (m,) = await r.receive_messages(max_wait_time=10)
        first = m.locked_until_utc
        emu.advance("PT30S")
        assert await r.renew_message_lock(m) - first >= datetime.timedelta(seconds=29)
        await r.complete_message(m)
    await asend(asb, "a-lost", "lost")
    async with asb.get_queue_receiver("a-lost") as r:
        (m,) = await r.receive_messages(max_wait_time=10)
        emu.advance("PT10S")
        with pytest.raises(MessageLockLostError):
            await r.complete_message(m)


async def test_aio_peek_from_a_sequence_number(asb):
    await asend(asb, "a-peek", "p0", "p1", "p2")
    async with asb.get_queue_receiver("a-peek") as r:
        all_ = await r.peek_messages(max_message_count=10, sequence_number=1)
        assert [p.message_id for p in all_] == ["p0", "p1", "p2"]
        tail = await r.peek_messages(max_message_count=10, sequence_number=all_[2].sequence_number)
        assert [p.message_id for p in tail] == ["p2"]
