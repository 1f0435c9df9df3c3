"""AMQP over WebSockets (transport_type=TransportType.AmqpOverWebsocket), sync and aio.

How azure-servicebus 7.15 dials with UseDevelopmentEmulator=true (TLS off, so ws://, path
/$servicebus/websocket, subprotocol AMQPWSB10): the Endpoint's port is dropped for WebSockets.
The sync client (websocket-client) dials ws://localhost/$servicebus/websocket, i.e. port 80; the
aio client (aiohttp) dials ws://localhost:443/$servicebus/websocket. Neither is an emulator port.
What a user does: custom_endpoint_address="sb://localhost:<port>" with the emulator's AMQP port or
its HTTP port (both serve ws://); the SDK then dials ws://localhost:<port>/$servicebus/websocket.
The first test pins that dialing, so that a new SDK version that fixes it is noticed."""
import asyncio

import aiohttp
import pytest
import websocket
from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusReceiveMode, TransportType
from azure.servicebus.aio import ServiceBusClient as AsyncServiceBusClient
from azure.servicebus.exceptions import ServiceBusConnectionError

from conftest import body_bytes

QUEUES = ["ws", "ws-aio", {"name": "ws-session", "properties": {"RequiresSession": True}}]
WS = TransportType.AmqpOverWebsocket


@pytest.fixture
def dialed(monkeypatch):
    """The URLs the SDK's WebSocket libraries are asked to connect to."""
    urls = []
    real_sync = websocket.create_connection

    def sync_dial(url, **kw):
        urls.append(url)
        return real_sync(url, **kw)

    real_aio = aiohttp.ClientSession.ws_connect

    def aio_dial(self, url, **kw):
        urls.append(str(url))
        return real_aio(self, url, **kw)

    monkeypatch.setattr(websocket, "create_connection", sync_dial)
    monkeypatch.setattr(aiohttp.ClientSession, "ws_connect", aio_dial)
    return urls


def test_without_custom_endpoint_it_dials_a_default_port(emu, dialed):
    with ServiceBusClient.from_connection_string(emu.connection_string, transport_type=WS, retry_total=0) as sb:
        with pytest.raises(ServiceBusConnectionError):
            with sb.get_queue_sender("ws") as s:
                s.send_messages(ServiceBusMessage("never"))
    assert dialed[0] == "ws://localhost/$servicebus/websocket", dialed


async def test_aio_without_custom_endpoint_it_dials_443(emu, dialed):
    async with AsyncServiceBusClient.from_connection_string(emu.connection_string, transport_type=WS,
                                                            retry_total=0) as sb:
        with pytest.raises(ServiceBusConnectionError):
            async with sb.get_queue_sender("ws-aio") as s:
                await s.send_messages(ServiceBusMessage("never"))
    assert dialed[0] == "ws://localhost:443/$servicebus/websocket", dialed


@pytest.mark.parametrize("port_kind", ["amqp", "http"])
def test_send_receive_settle_over_websockets(emu, dialed, port_kind):
    port = emu.amqp_port if port_kind == "amqp" else emu.http_port
    big = b"w" * 200_000  # several WebSocket frames
    with ServiceBusClient.from_connection_string(emu.connection_string, transport_type=WS,
                                                 custom_endpoint_address="sb://localhost:%d" % port) as sb:
        with sb.get_queue_sender("ws") as s:
            s.send_messages([ServiceBusMessage("one", message_id="one"), ServiceBusMessage(big, message_id="big")])
            batch = s.create_message_batch()
            batch.add_message(ServiceBusMessage("b", message_id="b"))
            s.send_messages(batch)
        with sb.get_queue_receiver("ws") as r:
            got = []
            while len(got) < 3:
                more = r.receive_messages(max_message_count=3, max_wait_time=10)
                assert more, got
                got += more
            assert [m.message_id for m in got] == ["one", "big", "b"]
            assert body_bytes(got[1]) == big
            r.abandon_message(got[0])
            for m in got[1:]:
                r.complete_message(m)
            (again,) = r.receive_messages(max_wait_time=10)
            assert again.message_id == "one" and again.delivery_count == 1
            assert r.peek_messages(sequence_number=again.sequence_number)[0].message_id == "one"  # $management
            r.renew_message_lock(again)
            r.complete_message(again)
    assert dialed and set(dialed) == {"ws://localhost:%d/$servicebus/websocket" % port}, dialed


def test_session_over_websockets(emu):
    with ServiceBusClient.from_connection_string(emu.connection_string, transport_type=WS,
                                                 custom_endpoint_address="sb://localhost:%d" % emu.http_port) as sb:
        with sb.get_queue_sender("ws-session") as s:
            s.send_messages(ServiceBusMessage("s", session_id="W"))
        with sb.get_queue_receiver("ws-session", session_id="W") as r:
            r.session.set_state(b"over ws")
            assert r.session.get_state() == b"over ws"
            (m,) = r.receive_messages(max_wait_time=10)
            r.complete_message(m)


async def test_aio_send_receive_over_websockets(emu, dialed):
    big = b"a" * 250_000
    async with AsyncServiceBusClient.from_connection_string(
            emu.connection_string, transport_type=WS, custom_endpoint_address="sb://localhost:%d" % emu.amqp_port) as sb:
        async with sb.get_queue_sender("ws-aio") as s:
            await s.send_messages(ServiceBusMessage("x", message_id="x"))
            await s.send_messages(ServiceBusMessage(big, message_id="big"))  # alone: over a batch's 256 KB
        async with sb.get_queue_receiver("ws-aio", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
            got = []
            while len(got) < 2:
                more = await r.receive_messages(max_message_count=2, max_wait_time=10)
                assert more, got
                got += more
    assert [m.message_id for m in got] == ["x", "big"]
    assert body_bytes(got[1]) == big
    assert set(dialed) == {"ws://localhost:%d/$servicebus/websocket" % emu.amqp_port}, dialed
    await asyncio.sleep(0)
