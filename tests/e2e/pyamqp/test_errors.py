"""Errors as azure-servicebus 7.15 maps them from what sbemu answers, sync and aio:
an unknown entity (Service Bus refuses its $cbs put-token with 404 "could not be found", which
this SDK raises as ServiceBusAuthenticationError carrying that text; the Go SDK reads the same
answer as CodeNotFound), ServiceBusAuthenticationError (wrong key), MessageLockLostError,
SessionCannotBeLockedError, MessageSizeExceededError, ServiceBusQuotaExceededError (MaxSizeInMegabytes,
which sbemu enforces). ServiceBusServerBusyError is in test_pg_outage.py."""
import pytest
from azure.servicebus import ServiceBusClient, ServiceBusMessage
from azure.servicebus.aio import ServiceBusClient as AsyncServiceBusClient
from azure.servicebus.exceptions import (MessageLockLostError, MessageSizeExceededError,
                                         ServiceBusAuthenticationError,
                                         ServiceBusQuotaExceededError, SessionCannotBeLockedError)

QUEUES = [
    "err-q",
    {"name": "err-small", "properties": {"MaxSizeInMegabytes": 1}},
    {"name": "err-small-aio", "properties": {"MaxSizeInMegabytes": 1}},
    {"name": "err-lock", "properties": {"LockDuration": "PT5S"}},
    {"name": "err-sess", "properties": {"RequiresSession": True}},
]
TOPICS = [{"name": "err-t", "subscriptions": [{"name": "s"}]}]


def client(emu, **kw):
    return ServiceBusClient.from_connection_string(emu.connection_string, retry_total=0, **kw)


# The put-token for an entity that does not exist is answered 404 (as Service Bus answers it);
# this SDK raises any refused put-token as ServiceBusAuthenticationError ("Error condition:
# amqp:client-error"), without the status or the text.
NOT_FOUND = r"amqp:client-error"


def test_entity_not_found(emu):
    with client(emu) as sb:
        with pytest.raises(ServiceBusAuthenticationError, match=NOT_FOUND):
            with sb.get_queue_sender("no-such-queue") as s:
                s.send_messages(ServiceBusMessage("x"))
        with pytest.raises(ServiceBusAuthenticationError, match=NOT_FOUND):
            with sb.get_queue_receiver("no-such-queue") as r:
                r.receive_messages(max_wait_time=2)
        with pytest.raises(ServiceBusAuthenticationError, match=NOT_FOUND):
            with sb.get_subscription_receiver("err-t", "no-such-sub") as r:
                r.receive_messages(max_wait_time=2)
        with pytest.raises(ServiceBusAuthenticationError, match=NOT_FOUND):
            with sb.get_topic_sender("no-such-topic") as s:
                s.send_messages(ServiceBusMessage("x"))


def test_wrong_key(emu):
    with ServiceBusClient.from_connection_string(emu.connection_string_with_key("not-the-key"), retry_total=0) as sb:
        with pytest.raises(ServiceBusAuthenticationError):
            with sb.get_queue_sender("err-q") as s:
                s.send_messages(ServiceBusMessage("x"))
        with pytest.raises(ServiceBusAuthenticationError):
            with sb.get_queue_receiver("err-q") as r:
                r.receive_messages(max_wait_time=2)


def test_quota_exceeded_max_size_in_megabytes(emu):
    refused = None
    sent = 0
    with client(emu) as sb, sb.get_queue_sender("err-small") as s:
        for i in range(30):  # 30 x 60 KB into a 1 MB queue
            try:
                s.send_messages(ServiceBusMessage(b"q" * 60_000))
                sent += 1
            except ServiceBusQuotaExceededError as e:
                refused = e
                break
    assert refused is not None, "30 x 60 KB into a 1 MB queue were all taken"
    assert 10 <= sent < 18, sent
    # draining makes room again
    with client(emu) as sb:
        with sb.get_queue_receiver("err-small") as r:
            for m in r.receive_messages(max_message_count=5, max_wait_time=10):
                r.complete_message(m)
        with sb.get_queue_sender("err-small") as s:
            s.send_messages(ServiceBusMessage(b"q" * 60_000))


def test_lock_lost_and_session_cannot_be_locked(emu):
    with client(emu) as sb:
        with sb.get_queue_sender("err-lock") as s:
            s.send_messages(ServiceBusMessage("l"))
        with sb.get_queue_receiver("err-lock") as r:
            (m,) = r.receive_messages(max_wait_time=10)
            emu.advance("PT6S")
            with pytest.raises(MessageLockLostError):
                r.abandon_message(m)
        with sb.get_queue_sender("err-sess") as s:
            s.send_messages(ServiceBusMessage("s", session_id="X"))
        with sb.get_queue_receiver("err-sess", session_id="X"):
            with client(emu) as other:
                with pytest.raises(SessionCannotBeLockedError):
                    with other.get_queue_receiver("err-sess", session_id="X") as r2:
                        r2.receive_messages(max_wait_time=2)


def test_message_size_exceeded(emu):
    with client(emu) as sb, sb.get_queue_sender("err-q") as s:
        with pytest.raises(MessageSizeExceededError):
            s.send_messages(ServiceBusMessage(b"x" * 262_145))
        with pytest.raises(MessageSizeExceededError):
            s.create_message_batch().add_message(ServiceBusMessage(b"x" * 262_145))


# ---- aio ----

async def test_aio_entity_not_found_and_wrong_key(emu):
    async with AsyncServiceBusClient.from_connection_string(emu.connection_string, retry_total=0) as sb:
        with pytest.raises(ServiceBusAuthenticationError, match=NOT_FOUND):
            async with sb.get_queue_sender("no-such-queue") as s:
                await s.send_messages(ServiceBusMessage("x"))
    async with AsyncServiceBusClient.from_connection_string(emu.connection_string_with_key("nope"), retry_total=0) as sb:
        with pytest.raises(ServiceBusAuthenticationError):
            async with sb.get_queue_receiver("err-q") as r:
                await r.receive_messages(max_wait_time=2)


async def test_aio_quota_and_size(emu):
    refused = None
    async with AsyncServiceBusClient.from_connection_string(emu.connection_string, retry_total=0) as sb:
        async with sb.get_queue_sender("err-small-aio") as s:
            for i in range(30):
                try:
                    await s.send_messages(ServiceBusMessage(b"q" * 60_000))
                except ServiceBusQuotaExceededError as e:
                    refused = e
                    break
            with pytest.raises(MessageSizeExceededError):
                await s.send_messages(ServiceBusMessage(b"x" * 262_145))
    assert refused is not None
