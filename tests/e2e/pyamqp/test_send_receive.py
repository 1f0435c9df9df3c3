"""Sends (one, a list, a batch, scheduled) and receives (peek-lock, receive-and-delete), sync and aio."""
import datetime

import pytest
from azure.servicebus import (ServiceBusClient, ServiceBusMessage, ServiceBusReceiveMode,
                              ServiceBusReceivedMessage)
from azure.servicebus.aio import ServiceBusClient as AsyncServiceBusClient
from azure.servicebus.exceptions import MessageSizeExceededError

from conftest import body_bytes

QUEUES = ["sr-one", "sr-list", "sr-batch", "sr-sched", "sr-rad", "sr-a-one", "sr-a-batch", "sr-a-sched", "sr-a-rad"]


def drain(receiver, want, max_wait_time=5):
    """Receives until `want` messages came or nothing more arrives within max_wait_time."""
    got = []
    while len(got) < want:
        batch = receiver.receive_messages(max_message_count=want - len(got), max_wait_time=max_wait_time)
        if not batch:
            break
        got.extend(batch)
    return got


async def adrain(receiver, want, max_wait_time=5):
    got = []
    while len(got) < want:
        batch = await receiver.receive_messages(max_message_count=want - len(got), max_wait_time=max_wait_time)
        if not batch:
            break
        got.extend(batch)
    return got


@pytest.fixture
def sb(emu):
    with ServiceBusClient.from_connection_string(emu.connection_string) as c:
        yield c


@pytest.fixture
async def asb(emu):
    async with AsyncServiceBusClient.from_connection_string(emu.connection_string) as c:
        yield c


def test_send_one_receive_peek_lock_complete(sb):
    with sb.get_queue_sender("sr-one") as s:
        s.send_messages(ServiceBusMessage("hello", message_id="m1"))
    with sb.get_queue_receiver("sr-one") as r:
        msgs = r.receive_messages(max_message_count=1, max_wait_time=10)
        assert len(msgs) == 1
        m = msgs[0]
        assert isinstance(m, ServiceBusReceivedMessage)
        assert body_bytes(m) == b"hello"
        assert m.message_id == "m1"
        assert m.delivery_count == 0
        assert m.sequence_number >= 1
        assert m.locked_until_utc is not None and m.locked_until_utc > datetime.datetime.now(datetime.timezone.utc)
        r.complete_message(m)
        assert r.receive_messages(max_message_count=1, max_wait_time=1) == []
        # completed means gone: a peek finds nothing
        assert r.peek_messages(max_message_count=5) == []


def test_send_list(sb):
    with sb.get_queue_sender("sr-list") as s:
        s.send_messages([ServiceBusMessage("l%d" % i, message_id="l%d" % i) for i in range(10)])
    with sb.get_queue_receiver("sr-list", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
        got = drain(r, 10)
    assert [m.message_id for m in got] == ["l%d" % i for i in range(10)], "in order, once each"
    assert [body_bytes(m) for m in got] == [b"l%d" % i for i in range(10)]


def test_send_batch_and_size_exceeded(sb):
    with sb.get_queue_sender("sr-batch") as s:
        batch = s.create_message_batch()
        assert batch.max_size_in_bytes == 262144, "the link's max-message-size from sbemu's attach"
        n = 0
        with pytest.raises(MessageSizeExceededError):
            while True:
                batch.add_message(ServiceBusMessage(b"x" * 1000, message_id="b%d" % n))
                n += 1
        assert len(batch) == n and 200 < n < 262
        s.send_messages(batch)
        # a message that does not fit into an empty batch either
        with pytest.raises(MessageSizeExceededError):
            s.create_message_batch().add_message(ServiceBusMessage(b"y" * 300000))
        # sent alone, the SDK lets it go and sbemu refuses it: rejected, amqp:link:message-size-exceeded
        with pytest.raises(MessageSizeExceededError):
            s.send_messages(ServiceBusMessage(b"y" * 300000))
    with sb.get_queue_receiver("sr-batch", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
        got = drain(r, n + 1, max_wait_time=3)
    assert [m.message_id for m in got] == ["b%d" % i for i in range(n)]


def test_schedule_and_cancel(sb, emu):
    at = emu.clock_now() + datetime.timedelta(minutes=10)
    with sb.get_queue_sender("sr-sched") as s:
        seqs = s.schedule_messages([ServiceBusMessage("keep", message_id="keep"),
                                    ServiceBusMessage("drop", message_id="drop")], at)
        assert len(seqs) == 2 and seqs[0] != seqs[1]
        s.cancel_scheduled_messages(seqs[1])
    with sb.get_queue_receiver("sr-sched") as r:
        peeked = r.peek_messages(max_message_count=10)
        assert [p.message_id for p in peeked] == ["keep"], "the cancelled one is gone"
        p = peeked[0]
        assert p.sequence_number == seqs[0]
        assert p.state.name == "SCHEDULED"
        assert abs((p.scheduled_enqueue_time_utc - at).total_seconds()) < 1
        assert r.receive_messages(max_wait_time=1) == [], "not before its time"
        emu.advance("PT11M")  # the emulator's clock, instead of waiting 10 minutes
        got = r.receive_messages(max_message_count=5, max_wait_time=10)
        assert [m.message_id for m in got] == ["keep"]
        # activation enqueues it anew, with a new sequence number (message-sequencing.md)
        assert got[0].sequence_number > max(seqs)
        r.complete_message(got[0])


def test_receive_and_delete(sb):
    with sb.get_queue_sender("sr-rad") as s:
        s.send_messages([ServiceBusMessage("r%d" % i) for i in range(3)])
    with sb.get_queue_receiver("sr-rad", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
        got = drain(r, 3)
        assert [body_bytes(m) for m in got] == [b"r0", b"r1", b"r2"]
        assert all(m.lock_token is None or m.locked_until_utc is None for m in got)
    with sb.get_queue_receiver("sr-rad") as r:
        assert r.peek_messages(max_message_count=5) == [], "receive-and-delete took them away"


# ---- the same paths through azure.servicebus.aio ----

async def test_aio_send_one_list_receive_complete(asb):
    async with asb.get_queue_sender("sr-a-one") as s:
        await s.send_messages(ServiceBusMessage("a0", message_id="a0"))
        await s.send_messages([ServiceBusMessage("a%d" % i, message_id="a%d" % i) for i in (1, 2)])
    async with asb.get_queue_receiver("sr-a-one") as r:
        got = await adrain(r, 3)
        assert [m.message_id for m in got] == ["a0", "a1", "a2"]
        for m in got:
            await r.complete_message(m)
        assert await r.receive_messages(max_wait_time=1) == []


async def test_aio_batch_and_size_exceeded(asb):
    async with asb.get_queue_sender("sr-a-batch") as s:
        batch = await s.create_message_batch(max_size_in_bytes=5000)
        n = 0
        with pytest.raises(MessageSizeExceededError):
            while True:
                batch.add_message(ServiceBusMessage(b"x" * 1000, message_id="ab%d" % n))
                n += 1
        assert n == 4
        await s.send_messages(batch)
        with pytest.raises(MessageSizeExceededError):
            await s.send_messages(ServiceBusMessage(b"y" * 300000))
    async with asb.get_queue_receiver("sr-a-batch", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
        got = await adrain(r, n + 1, max_wait_time=3)
    assert [m.message_id for m in got] == ["ab%d" % i for i in range(n)]


async def test_aio_schedule_and_cancel(asb, emu):
    at = emu.clock_now() + datetime.timedelta(minutes=10)
    async with asb.get_queue_sender("sr-a-sched") as s:
        seqs = await s.schedule_messages([ServiceBusMessage("k", message_id="k"), ServiceBusMessage("d", message_id="d")], at)
        await s.cancel_scheduled_messages(seqs[1:])
    async with asb.get_queue_receiver("sr-a-sched") as r:
        peeked = await r.peek_messages(max_message_count=10)
        assert [p.message_id for p in peeked] == ["k"]
        emu.advance("PT11M")
        got = await r.receive_messages(max_message_count=5, max_wait_time=10)
        assert [m.message_id for m in got] == ["k"]
        await r.complete_message(got[0])


async def test_aio_receive_and_delete(asb):
    async with asb.get_queue_sender("sr-a-rad") as s:
        await s.send_messages([ServiceBusMessage("r%d" % i) for i in range(3)])
    async with asb.get_queue_receiver("sr-a-rad", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
        got = await adrain(r, 3)
        assert [body_bytes(m) for m in got] == [b"r0", b"r1", b"r2"]
    async with asb.get_queue_receiver("sr-a-rad") as r:
        assert await r.peek_messages(max_message_count=5) == []
