"""Message and application properties of every type azure-servicebus 7.15 sends come back equal,
sync and aio; AMQP bodies (data, value, sequence) and header/annotation fields too.

Types: the SDK's documented application-property types (int, float, bool, str, bytes, uuid.UUID,
datetime, None). Left out: decimal.Decimal, which the SDK encodes as decimal128 but cannot decode
(its own _decode_decimal128 raises decimal.Overflow on what it sent, and the receiver drops the
message); ints beyond 32 bits, which its encoder refuses (ValueError)."""
import datetime
import uuid

from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusReceiveMode
from azure.servicebus.aio import ServiceBusClient as AsyncServiceBusClient
from azure.servicebus.amqp import AmqpAnnotatedMessage, AmqpMessageBodyType, AmqpMessageHeader, AmqpMessageProperties

from conftest import body_bytes

QUEUES = ["props", "props-aio", "bodies", "bodies-aio"]

UUID = uuid.UUID("6f1d7c1e-3a8b-4b7e-9c51-0f2a4d6e8b90")
WHEN = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=datetime.timezone.utc)
APP_PROPS = {
    "int": 42,
    "negative": -7,
    "int32max": 2**31 - 1,
    "int32min": -(2**31),
    "double": 3.25,
    "true": True,
    "false": False,
    "str": 'text with ünïcödé and "quotes"',
    "empty": "",
    "bytes": b"utf-8 bytes \xc3\xbc",  # the SDK sends bytes values as strings (decoded as UTF-8)
    "uuid": UUID,
    "datetime": WHEN,
    "none": None,
    b"byteskey": 1,
}
# What the SDK hands back (documented on ServiceBusMessage.application_properties): keys and str
# values as bytes, a timestamp as epoch milliseconds, everything else as sent.
EXPECTED_APP_PROPS = {
    b"int": 42,
    b"negative": -7,
    b"int32max": 2**31 - 1,
    b"int32min": -(2**31),
    b"double": 3.25,
    b"true": True,
    b"false": False,
    b"str": 'text with ünïcödé and "quotes"'.encode(),
    b"empty": b"",
    b"bytes": b"utf-8 bytes \xc3\xbc",
    b"uuid": UUID,
    b"datetime": int(WHEN.timestamp() * 1000),
    b"none": None,
    b"byteskey": 1,
}


def full_message():
    return ServiceBusMessage(
        "body with ü",
        application_properties=APP_PROPS,
        message_id="msg-props-1",
        correlation_id="corr-1",
        subject="the-subject",
        content_type="application/json",
        to="someone@example",
        reply_to="reply-queue",
        reply_to_session_id="reply-session",
        partition_key="pk-1",
        time_to_live=datetime.timedelta(minutes=30),
    )


def check_full(m, before, after):
    assert body_bytes(m) == "body with ü".encode()
    assert str(m) == "body with ü"
    assert m.message_id == "msg-props-1"
    assert m.correlation_id == "corr-1"
    assert m.subject == "the-subject"
    assert m.content_type == "application/json"
    assert m.to == "someone@example"
    assert m.reply_to == "reply-queue"
    assert m.reply_to_session_id == "reply-session"
    assert m.partition_key == "pk-1"
    assert m.time_to_live == datetime.timedelta(minutes=30)
    assert m.session_id is None
    assert m.application_properties == EXPECTED_APP_PROPS
    # broker-stamped
    assert m.delivery_count == 0
    assert m.sequence_number >= 1
    assert isinstance(m.lock_token, uuid.UUID) or uuid.UUID(str(m.lock_token))
    assert before - datetime.timedelta(seconds=2) <= m.enqueued_time_utc <= after + datetime.timedelta(seconds=2)
    assert m.expires_at_utc == m.enqueued_time_utc + datetime.timedelta(minutes=30)
    left = (m.locked_until_utc - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
    assert 30 < left <= 62, "locked ~60 s ahead (LockDuration PT1M), is %.1f s" % left


def annotated_messages():
    return [
        AmqpAnnotatedMessage(
            value_body={"a": [1, 2.5, "x", None, True], "n": {"deep": b"bin"}},
            header=AmqpMessageHeader(priority=7, durable=True),
            annotations={"x-custom": "v", "x-num": 5},
            application_properties={"k": "v"},
            properties=AmqpMessageProperties(message_id=12345, user_id=b"user", group_id="g", group_sequence=3,
                                             content_encoding="gzip", correlation_id=UUID),
        ),
        AmqpAnnotatedMessage(sequence_body=[[1, 2], ["a", b"b"]], properties=AmqpMessageProperties(message_id=UUID)),
        AmqpAnnotatedMessage(data_body=[b"first", b"second"], properties=AmqpMessageProperties(message_id=b"binary-id")),
        AmqpAnnotatedMessage(value_body="a plain string value"),
    ]


def check_annotated(got):
    assert len(got) == 4, [m.raw_amqp_message.body for m in got]
    v, s, d, plain = (m.raw_amqp_message for m in got)
    assert v.body_type == AmqpMessageBodyType.VALUE
    assert v.body == {b"a": [1, 2.5, b"x", None, True], b"n": {b"deep": b"bin"}}
    assert v.header.priority == 7 and v.header.durable is True
    assert v.annotations[b"x-custom"] == b"v" and v.annotations[b"x-num"] == 5
    assert v.application_properties == {b"k": b"v"}
    assert v.properties.message_id == 12345
    assert v.properties.user_id == b"user"
    assert v.properties.group_id == b"g" and v.properties.group_sequence == 3
    assert v.properties.content_encoding == b"gzip"
    assert v.properties.correlation_id == UUID
    assert s.body_type == AmqpMessageBodyType.SEQUENCE
    assert list(s.body) == [[1, 2], [b"a", b"b"]]
    assert s.properties.message_id == UUID
    assert d.body_type == AmqpMessageBodyType.DATA
    assert list(d.body) == [b"first", b"second"]
    assert d.properties.message_id == b"binary-id"
    assert plain.body_type == AmqpMessageBodyType.VALUE and plain.body == b"a plain string value"
    # a header sbemu did not get is the default one: priority 4, not durable
    assert s.header.priority == 4 and not s.header.durable


def test_every_property_type(emu):
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb:
        before = datetime.datetime.now(datetime.timezone.utc)
        with sb.get_queue_sender("props") as s:
            s.send_messages(full_message())
        after = datetime.datetime.now(datetime.timezone.utc)
        with sb.get_queue_receiver("props") as r:
            (m,) = r.receive_messages(max_message_count=1, max_wait_time=10)
            check_full(m, before, after)
            # peeked (locked, still there), the same; a receiver peeks on from what it received last,
            # so from the message's own sequence number
            (p,) = r.peek_messages(max_message_count=1, sequence_number=m.sequence_number)
            assert p.application_properties == EXPECTED_APP_PROPS and p.message_id == "msg-props-1"
            r.complete_message(m)


def test_amqp_bodies_and_sections(emu):
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb:
        with sb.get_queue_sender("bodies") as s:
            for a in annotated_messages():
                s.send_messages(a)
        with sb.get_queue_receiver("bodies", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
            got = r.receive_messages(max_message_count=4, max_wait_time=10)
            got += r.receive_messages(max_message_count=4 - len(got), max_wait_time=3) if len(got) < 4 else []
        check_annotated(got)


async def test_aio_every_property_type(emu):
    async with AsyncServiceBusClient.from_connection_string(emu.connection_string) as sb:
        before = datetime.datetime.now(datetime.timezone.utc)
        async with sb.get_queue_sender("props-aio") as s:
            await s.send_messages(full_message())
        after = datetime.datetime.now(datetime.timezone.utc)
        async with sb.get_queue_receiver("props-aio") as r:
            (m,) = await r.receive_messages(max_message_count=1, max_wait_time=10)
            check_full(m, before, after)
            await r.complete_message(m)


async def test_aio_amqp_bodies_as_one_batch(emu):
    async with AsyncServiceBusClient.from_connection_string(emu.connection_string) as sb:
        async with sb.get_queue_sender("bodies-aio") as s:
            await s.send_messages(annotated_messages())  # a list goes as one batched transfer
        async with sb.get_queue_receiver("bodies-aio", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
            got = await r.receive_messages(max_message_count=4, max_wait_time=10)
            if len(got) < 4:
                got += await r.receive_messages(max_message_count=4 - len(got), max_wait_time=3)
        check_annotated(got)
