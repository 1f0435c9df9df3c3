#!/usr/bin/python3
"""Throughput of one AMQP 1.0 queue: send N messages (each waits for its
`accepted`, i.e. for sbemu's commit), then receive and accept them all.

Speaks plain AMQP 1.0 with Qpid Proton (Debian's python3-qpid-proton), so the
same client measures sbemu and a peer broker side by side. For sbemu it first
puts a SAS token on $cbs, as the Service Bus SDKs do.

  amqp_bench.py URL ADDRESS COUNT [--size BYTES] [--sas-key-name N --sas-key K]

Prints one line: `<label> send: N msg/s  receive+accept: N msg/s`."""
import argparse
import base64
import hashlib
import hmac
import time
import urllib.parse

from proton import Message
from proton.handlers import MessagingHandler
from proton.reactor import Container

CREDIT = 500  # receiver prefetch, as an SDK with prefetch would use
WINDOW = 500  # sends in flight before waiting for acceptances


def sas_token(audience, key_name, key, ttl=3600):
    sr = urllib.parse.quote_plus(audience)
    se = str(int(time.time()) + ttl)
    sig = base64.b64encode(hmac.new(key.encode(), (sr + "\n" + se).encode(), hashlib.sha256).digest())
    return "SharedAccessSignature sr=%s&sig=%s&se=%s&skn=%s" % (
        sr, urllib.parse.quote_plus(sig), se, urllib.parse.quote_plus(key_name))


class Bench(MessagingHandler):
    def __init__(self, args):
        super().__init__(prefetch=0, auto_accept=False)
        self.a = args
        self.body = b"x" * args.size
        self.sent = self.accepted = self.received = 0
        self.t_send = self.t_recv = None
        self.result = None

    def on_start(self, event):
        self.conn = event.container.connect(self.a.url, allowed_mechs="ANONYMOUS PLAIN")
        if self.a.sas_key:
            self.cbs_reply = event.container.create_receiver(self.conn, "$cbs", name="bench-cbs-reply")
            self.cbs = event.container.create_sender(self.conn, "$cbs")
        else:
            self.start_sending(event)

    def on_link_opened(self, event):
        if self.a.sas_key and event.link == self.cbs_reply:
            self.cbs_reply.flow(1)

    def on_sendable(self, event):
        if self.a.sas_key and event.sender == getattr(self, "cbs", None) and not getattr(self, "token_sent", False):
            self.token_sent = True
            audience = "sb://%s/%s" % (urllib.parse.urlparse(self.a.url).hostname, self.a.address)
            self.cbs.send(Message(id="bench-1", reply_to="bench-cbs-reply",
                                  properties={"operation": "put-token", "type": "servicebus.windows.net:sastoken",
                                              "name": audience},
                                  body=sas_token(audience, self.a.sas_key_name, self.a.sas_key)))
        elif event.sender == getattr(self, "sender", None):
            self.send_some()

    def on_message(self, event):
        if event.receiver == getattr(self, "cbs_reply", None):
            code = event.message.properties.get("status-code")
            if code not in (200, 202):
                raise SystemExit("put-token refused: %s" % event.message.properties)
            self.start_sending(event)
            return
        self.accept(event.delivery)
        self.received += 1
        if self.received == self.a.count:
            self.finish()
        elif self.receiver.credit < CREDIT // 2:
            self.receiver.flow(CREDIT - self.receiver.credit)

    def start_sending(self, event):
        self.sender = event.container.create_sender(self.conn, self.a.address)
        self.t_send = time.monotonic()

    def send_some(self):
        while self.sender.credit and self.sent < self.a.count and self.sent - self.accepted < WINDOW:
            self.sender.send(Message(body=self.body, durable=True))
            self.sent += 1

    def on_accepted(self, event):
        self.accepted += 1
        if self.accepted == self.a.count:
            self.send_rate = self.a.count / (time.monotonic() - self.t_send)
            self.t_recv = time.monotonic()
            self.receiver = event.container.create_receiver(self.conn, self.a.address)
            self.receiver.flow(CREDIT)
        else:
            self.send_some()

    def on_rejected(self, event):
        raise SystemExit("send rejected: %s" % event.delivery.remote.condition)

    def finish(self):
        recv_rate = self.a.count / (time.monotonic() - self.t_recv)
        self.result = (self.send_rate, recv_rate)
        self.conn.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("address")
    p.add_argument("count", type=int)
    p.add_argument("--size", type=int, default=100)
    p.add_argument("--label", default="broker")
    p.add_argument("--sas-key-name", default="RootManageSharedAccessKey")
    p.add_argument("--sas-key")
    a = p.parse_args()
    b = Bench(a)
    Container(b).run()
    print("%-10s %6d x %d B   send (each accepted): %8.0f msg/s   receive+accept: %8.0f msg/s"
          % (a.label, a.count, a.size, b.result[0], b.result[1]))


if __name__ == "__main__":
    main()
