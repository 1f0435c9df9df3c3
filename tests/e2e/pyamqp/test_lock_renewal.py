"""AutoLockRenewer keeps message and session locks (LockDuration PT5S) past their duration while a
receiver iterates, sync and aio. The renewer works on the wall clock, so this module never moves
the emulator's clock and waits for real: each test holds its lock about 8 s."""
import datetime
import time

import pytest
from azure.servicebus import AutoLockRenewer, ServiceBusClient, ServiceBusMessage
from azure.servicebus.aio import AutoLockRenewer as AsyncAutoLockRenewer
from azure.servicebus.aio import ServiceBusClient as AsyncServiceBusClient

SHORT = {"LockDuration": "PT5S"}
QUEUES = [
    {"name": "renew", "properties": SHORT},
    {"name": "renew-aio", "properties": SHORT},
    {"name": "renew-session", "properties": dict(SHORT, RequiresSession=True)},
]
HOLD = 8.0  # seconds: past the 5 s lock, with room


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def test_iterating_receiver_with_auto_lock_renewer(emu):
    renewer = AutoLockRenewer(max_lock_renewal_duration=60)
    renewed = []
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb:
        with sb.get_queue_sender("renew") as s:
            s.send_messages([ServiceBusMessage("held", message_id="held"), ServiceBusMessage("next", message_id="next")])
        with sb.get_queue_receiver("renew", auto_lock_renewer=renewer, max_wait_time=10) as r:
            seen = []
            for m in r:
                seen.append(m.message_id)
                if m.message_id == "held":
                    first = m.locked_until_utc
                    assert first - utcnow() <= datetime.timedelta(seconds=6)
                    end = time.monotonic() + HOLD
                    while time.monotonic() < end:  # work that outlasts the lock
                        time.sleep(0.25)
                        renewed.append(m.locked_until_utc)
                    # 8 s after a 5 s lock began, it still runs: renewed
                    assert m.locked_until_utc > utcnow() > first, (first, m.locked_until_utc)
                    assert m.auto_renew_error is None
                r.complete_message(m)  # would be MessageLockLostError without the renewals
                if m.message_id == "next":
                    break
        renewer.close()
    assert seen == ["held", "next"], "the held message was not redelivered while renewed"
    assert len(set(renewed)) >= 3, "renewed several times"


def test_session_lock_kept_by_auto_lock_renewer(emu):
    renewer = AutoLockRenewer(max_lock_renewal_duration=60)
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb:
        with sb.get_queue_sender("renew-session") as s:
            s.send_messages([ServiceBusMessage("s%d" % i, session_id="S") for i in range(2)])
        with sb.get_queue_receiver("renew-session", session_id="S", auto_lock_renewer=renewer, max_wait_time=10) as r:
            first = r.session.locked_until_utc
            (m,) = r.receive_messages(max_wait_time=10)
            end = time.monotonic() + HOLD
            while time.monotonic() < end:
                time.sleep(0.25)
            assert r.session.locked_until_utc > utcnow() > first
            assert r.session.auto_renew_error is None
            r.complete_message(m)
            (m2,) = r.receive_messages(max_wait_time=10)  # the session is still ours
            assert str(m2) == "s1"
            r.complete_message(m2)
        renewer.close()


async def test_aio_iterating_receiver_with_auto_lock_renewer(emu):
    import asyncio
    renewer = AsyncAutoLockRenewer(max_lock_renewal_duration=60)
    async with AsyncServiceBusClient.from_connection_string(emu.connection_string) as sb:
        async with sb.get_queue_sender("renew-aio") as s:
            await s.send_messages(ServiceBusMessage("held", message_id="held"))
        async with sb.get_queue_receiver("renew-aio", auto_lock_renewer=renewer, max_wait_time=10) as r:
            async for m in r:
                first = m.locked_until_utc
                await asyncio.sleep(HOLD)
                assert m.locked_until_utc > utcnow() > first
                await r.complete_message(m)
                break
            assert await r.receive_messages(max_wait_time=1) == []
        await renewer.close()
