"""--max-message-size: a message of exactly that many encoded bytes goes through, one byte more is
refused (MessageSizeExceededError), and the SDK's batches are sized by the sender link's
max-message-size, sync and aio."""
import pytest
from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusReceiveMode
from azure.servicebus.aio import ServiceBusClient as AsyncServiceBusClient
from azure.servicebus.exceptions import MessageSizeExceededError
# The SDK's own encoder, to build a message of an exact encoded size (what goes on the wire).
from azure.servicebus._pyamqp._encode import encode_payload
from azure.servicebus._transport._pyamqp_transport import PyamqpTransport

from conftest import body_bytes

MAX = 65536
SBEMU_ARGS = ["--max-message-size", "64k"]
QUEUES = ["size", "size-aio"]


def encoded_size(m):
    return len(encode_payload(bytearray(), PyamqpTransport.to_outgoing_amqp_message(m.raw_amqp_message)))


def message_of(size, mid):
    """A message whose AMQP encoding is exactly `size` bytes."""
    n = size - encoded_size(ServiceBusMessage(b"", message_id=mid))
    # the data section's length prefix grows from 1 to 4 bytes past 255
    for body_len in (n - 3, n):
        m = ServiceBusMessage(b"z" * body_len, message_id=mid)
        if encoded_size(m) == size:
            return m, body_len
    raise AssertionError("no body length gives %d encoded bytes" % size)


def test_exactly_max_goes_one_more_is_refused(emu):
    at, at_len = message_of(MAX, "at-max")
    over, _ = message_of(MAX + 1, "over-max")
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb:
        with sb.get_queue_sender("size") as s:
            assert s.create_message_batch().max_size_in_bytes == MAX, "the attach's max-message-size"
            s.send_messages(at)
            with pytest.raises(MessageSizeExceededError) as ei:
                s.send_messages(over)
            assert "The message of %d bytes exceeds the maximum message size of %d bytes" % (MAX + 1, MAX) in str(ei.value)
            # the sender is still usable after a refusal
            s.send_messages(ServiceBusMessage("after", message_id="after"))
        with sb.get_queue_receiver("size", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
            got = r.receive_messages(max_message_count=3, max_wait_time=10)
            if len(got) < 2:
                got += r.receive_messages(max_message_count=3, max_wait_time=3)
    assert [m.message_id for m in got] == ["at-max", "after"]
    assert body_bytes(got[0]) == b"z" * at_len


def test_batch_fills_to_max_and_is_taken(emu):
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb:
        with sb.get_queue_sender("size") as s:
            batch = s.create_message_batch()
            n = 0
            with pytest.raises(MessageSizeExceededError):
                while True:
                    batch.add_message(ServiceBusMessage(b"b" * 1000, message_id="b%d" % n))
                    n += 1
            assert MAX - 1100 < batch.size_in_bytes <= MAX
            s.send_messages(batch)
        with sb.get_queue_receiver("size", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
            got = []
            while len(got) < n:
                more = r.receive_messages(max_message_count=n - len(got), max_wait_time=5)
                if not more:
                    break
                got += more
    assert [m.message_id for m in got] == ["b%d" % i for i in range(n)]


async def test_aio_exactly_max_goes_one_more_is_refused(emu):
    at, at_len = message_of(MAX, "a-at-max")
    over, _ = message_of(MAX + 1, "a-over-max")
    async with AsyncServiceBusClient.from_connection_string(emu.connection_string) as sb:
        async with sb.get_queue_sender("size-aio") as s:
            assert (await s.create_message_batch()).max_size_in_bytes == MAX
            await s.send_messages(at)
            with pytest.raises(MessageSizeExceededError):
                await s.send_messages(over)
        async with sb.get_queue_receiver("size-aio", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
            got = await r.receive_messages(max_message_count=2, max_wait_time=10)
    assert [m.message_id for m in got] == ["a-at-max"]
    assert body_bytes(got[0]) == b"z" * at_len
