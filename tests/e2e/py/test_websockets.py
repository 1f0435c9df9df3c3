"""Debian's azure-servicebus 7.8.2 over WebSockets (TransportType.AmqpOverWebsocket).

The SDK dials wss://<custom_endpoint_address host:port>/$servicebus/websocket, so it
works against the AMQP port (TLS and then HTTP are sniffed there) and the TLS port.
Messages over 64 KiB prove the frame-size fix: uamqp cuts a message into frames of
the broker's max-frame-size but refuses to encode a frame over its own (64 KiB).
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import AMQPS_PORT, EmulatorTestCase, body, start_module_emulator, stop_module_emulator  # noqa: E402

from azure.servicebus import (  # noqa: E402
    ServiceBusClient,
    ServiceBusMessage,
    ServiceBusSubQueue,
    TransportType,
)

WAIT = 5
LARGE = 200 * 1024  # bytes: under the default --max-message-size, over 64 KiB
QUEUES = ["py-ws", "py-large"]

EMU = None


def setUpModule():
    global EMU
    EMU = start_module_emulator(QUEUES, "pyws")
    WsTestCase.emu = EMU


def tearDownModule():
    stop_module_emulator(EMU)


class WsTestCase(EmulatorTestCase):
    def ws_client(self, port):
        return ServiceBusClient.from_connection_string(
            self.emu.connection_string(), transport_type=TransportType.AmqpOverWebsocket,
            custom_endpoint_address="sb://localhost:%d" % port, connection_verify=self.emu.cert_path,
            retry_total=1)

    def round_trip(self, client, queue):
        with client.get_queue_sender(queue) as s:
            s.send_messages([ServiceBusMessage("small", application_properties={"n": 1})])
            s.send_messages(ServiceBusMessage(b"L" * LARGE, message_id="large"))
        with client.get_queue_receiver(queue, max_wait_time=WAIT) as r:
            got = r.receive_messages(max_message_count=2, max_wait_time=WAIT)
            if len(got) < 2:
                got += r.receive_messages(max_message_count=2 - len(got), max_wait_time=WAIT)
            self.assertEqual([len(body(m)) for m in got], [5, LARGE])
            self.assertEqual(body(got[0]), b"small")
            self.assertEqual(got[0].application_properties[b"n"], 1)
            self.assertEqual(body(got[1]), b"L" * LARGE)
            r.abandon_message(got[0])
            r.dead_letter_message(got[1], reason="over-ws", error_description="checked")
            again = r.receive_messages(max_message_count=1, max_wait_time=WAIT)
            self.assertEqual([body(m) for m in again], [b"small"])
            self.assertEqual(again[0].delivery_count, 1)
            r.complete_message(again[0])
        with client.get_queue_receiver(queue, sub_queue=ServiceBusSubQueue.DEAD_LETTER, max_wait_time=WAIT) as d:
            dead = d.receive_messages(max_message_count=1, max_wait_time=WAIT)
            self.assertEqual([m.message_id for m in dead], ["large"])
            self.assertEqual(dead[0].dead_letter_reason, "over-ws")
            d.complete_message(dead[0])
        with client.get_queue_receiver(queue) as r:
            self.assertEqual(r.peek_messages(max_message_count=5), [])

    def test_wss_on_the_amqp_port(self):
        with self.ws_client(self.emu.amqp_port) as c:
            self.round_trip(c, "py-ws")

    def test_wss_on_the_tls_port(self):
        with self.ws_client(AMQPS_PORT) as c:
            self.round_trip(c, "py-ws")

    def test_large_message_over_plain_amqps(self):
        # no WebSocket: the frame-size fix is what lets uamqp send it at all
        with self.client.get_queue_sender("py-large") as s:
            s.send_messages(ServiceBusMessage(b"Z" * LARGE))
        with self.client.get_queue_receiver("py-large", max_wait_time=WAIT) as r:
            got = r.receive_messages(max_message_count=1, max_wait_time=WAIT)
            self.assertEqual([len(body(m)) for m in got], [LARGE])
            r.complete_message(got[0])


if __name__ == "__main__":
    unittest.main()
