"""Sessions through azure-servicebus 7.15, sync and aio: a named session, NEXT_AVAILABLE_SESSION,
session state, renew_lock, SessionCannotBeLockedError for a second receiver, a lapsed session lock,
and a send without a session id to a session queue."""
import datetime

import pytest
from azure.servicebus import NEXT_AVAILABLE_SESSION, ServiceBusClient, ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient as AsyncServiceBusClient
from azure.servicebus.exceptions import (OperationTimeoutError, ServiceBusError, SessionCannotBeLockedError,
                                         SessionLockLostError)

SESS = {"RequiresSession": True}
QUEUES = [{"name": n, "properties": SESS} for n in (
    "s-named", "s-next", "s-state", "s-renew", "s-locked", "s-empty", "s-nosid",
    "a-named", "a-next", "a-locked")] + [
    {"name": "s-lapse", "properties": dict(SESS, LockDuration="PT5S")}]


def send(sb, queue, msgs):
    with sb.get_queue_sender(queue) as s:
        s.send_messages(msgs)


async def asend(sb, queue, msgs):
    async with sb.get_queue_sender(queue) as s:
        await s.send_messages(msgs)


def m(body, sid):
    return ServiceBusMessage(body, session_id=sid, message_id=body)


@pytest.fixture
def sb(emu):
    with ServiceBusClient.from_connection_string(emu.connection_string) as c:
        yield c


@pytest.fixture
async def asb(emu):
    async with AsyncServiceBusClient.from_connection_string(emu.connection_string) as c:
        yield c


def test_named_session_in_order(sb):
    send(sb, "s-named", [m("a1", "A"), m("b1", "B"), m("a2", "A"), m("b2", "B"), m("a3", "A")])
    with sb.get_queue_receiver("s-named", session_id="A") as r:
        assert r.session.session_id == "A"
        assert r.session.locked_until_utc > datetime.datetime.now(datetime.timezone.utc)
        got = []
        while len(got) < 3:
            batch = r.receive_messages(max_message_count=3, max_wait_time=5)
            assert batch, "session A ran dry after %r" % got
            got += batch
        assert [x.message_id for x in got] == ["a1", "a2", "a3"]
        assert all(x.session_id == "A" for x in got)
        for x in got:
            r.complete_message(x)
        assert r.receive_messages(max_wait_time=1) == []
    with sb.get_queue_receiver("s-named", session_id="B") as r:
        got = r.receive_messages(max_message_count=5, max_wait_time=5)
        assert [x.message_id for x in got] == ["b1", "b2"]
        for x in got:
            r.complete_message(x)


def test_next_available_session(sb):
    send(sb, "s-next", [m("x1", "X"), m("y1", "Y")])
    seen = set()
    for _ in range(2):
        with sb.get_queue_receiver("s-next", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=5) as r:
            sid = r.session.session_id
            assert sid in ("X", "Y") and sid not in seen
            seen.add(sid)
            (x,) = r.receive_messages(max_wait_time=5)
            assert x.session_id == sid
            r.complete_message(x)
    assert seen == {"X", "Y"}


def test_next_available_session_none_within_max_wait_time(emu):
    with ServiceBusClient.from_connection_string(emu.connection_string, retry_total=0) as sb:
        with pytest.raises(OperationTimeoutError):
            with sb.get_queue_receiver("s-empty", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=2) as r:
                r.receive_messages(max_wait_time=2)


def test_session_state_kept_across_receivers(sb):
    send(sb, "s-state", [m("st", "S")])
    with sb.get_queue_receiver("s-state", session_id="S") as r:
        assert r.session.get_state() is None
        r.session.set_state(b"step-1 \x00\xff")
        assert r.session.get_state() == b"step-1 \x00\xff"
        r.session.set_state("text state")  # str is sent as UTF-8
        assert r.session.get_state() == b"text state"
    with sb.get_queue_receiver("s-state", session_id="S") as r:
        assert r.session.get_state() == b"text state"
        r.session.set_state(None)
        assert r.session.get_state() is None
        (x,) = r.receive_messages(max_wait_time=5)
        r.complete_message(x)


def test_session_renew_lock(sb, emu):
    send(sb, "s-renew", [m("rn", "R")])
    with sb.get_queue_receiver("s-renew", session_id="R") as r:
        first = r.session.locked_until_utc
        emu.advance("PT30S")
        renewed = r.session.renew_lock()
        assert renewed == r.session.locked_until_utc
        assert renewed - first >= datetime.timedelta(seconds=29)
        emu.advance("PT45S")  # past the first lock, within the renewed one
        (x,) = r.receive_messages(max_wait_time=5)
        r.complete_message(x)


def test_second_receiver_on_a_locked_session(sb, emu):
    send(sb, "s-locked", [m("l1", "L")])
    with sb.get_queue_receiver("s-locked", session_id="L") as holder:
        with ServiceBusClient.from_connection_string(emu.connection_string, retry_total=0) as other:
            with pytest.raises(SessionCannotBeLockedError):
                with other.get_queue_receiver("s-locked", session_id="L") as r:
                    r.receive_messages(max_wait_time=2)
        (x,) = holder.receive_messages(max_wait_time=5)
        holder.complete_message(x)
    # let go, the session can be taken again
    with sb.get_queue_receiver("s-locked", session_id="L") as r:
        assert r.session.session_id == "L"


def test_session_lock_lapses(sb, emu):
    send(sb, "s-lapse", [m("lp", "P")])
    with sb.get_queue_receiver("s-lapse", session_id="P") as r:
        (x,) = r.receive_messages(max_wait_time=5)
        emu.advance("PT10S")  # past LockDuration PT5S
        with pytest.raises(SessionLockLostError):
            r.complete_message(x)
    with sb.get_queue_receiver("s-lapse", session_id="P") as r:
        (again,) = r.receive_messages(max_wait_time=5)
        assert again.message_id == "lp" and again.delivery_count == 1
        r.complete_message(again)


def test_send_without_session_id_is_refused(emu):
    with ServiceBusClient.from_connection_string(emu.connection_string, retry_total=0) as sb:
        with sb.get_queue_sender("s-nosid") as s:
            with pytest.raises(ServiceBusError) as ei:
                s.send_messages(ServiceBusMessage("no session"))
        assert "session" in str(ei.value).lower()


# ---- aio ----

async def test_aio_named_session(asb):
    await asend(asb, "a-named", [m("a1", "A"), m("b1", "B"), m("a2", "A")])
    async with asb.get_queue_receiver("a-named", session_id="A") as r:
        got = await r.receive_messages(max_message_count=3, max_wait_time=5)
        if len(got) < 2:
            got += await r.receive_messages(max_message_count=3, max_wait_time=3)
        assert [x.message_id for x in got] == ["a1", "a2"]
        for x in got:
            await r.complete_message(x)


async def test_aio_next_available_and_state_and_renew(asb, emu):
    await asend(asb, "a-next", [m("n1", "N")])
    async with asb.get_queue_receiver("a-next", session_id=NEXT_AVAILABLE_SESSION, max_wait_time=5) as r:
        assert r.session.session_id == "N"
        await r.session.set_state(b"aio-state")
        assert await r.session.get_state() == b"aio-state"
        first = r.session.locked_until_utc
        emu.advance("PT30S")
        assert await r.session.renew_lock() - first >= datetime.timedelta(seconds=29)
        (x,) = await r.receive_messages(max_wait_time=5)
        await r.complete_message(x)


async def test_aio_session_state_and_cannot_be_locked(asb, emu):
    await asend(asb, "a-locked", [m("l1", "L")])
    async with asb.get_queue_receiver("a-locked", session_id="L") as holder:
        async with AsyncServiceBusClient.from_connection_string(emu.connection_string, retry_total=0) as other:
            with pytest.raises(SessionCannotBeLockedError):
                async with other.get_queue_receiver("a-locked", session_id="L") as r:
                    await r.receive_messages(max_wait_time=2)
        (x,) = await holder.receive_messages(max_wait_time=5)
        await holder.complete_message(x)
