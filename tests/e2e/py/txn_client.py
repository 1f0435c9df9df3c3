"""A raw AMQP 1.0 client (Debian's Proton 0.37) that speaks transactions the way the .NET
and Java SDKs do, since the JS and Python SDKs have none (azure-amqp Controller,
Declare, Discharge, TransactionalState; .NET AmqpTransactionManager):

- a coordinator link (a sender whose target is a coordinator, capability
  amqp:local-transactions), on the same AMQP session as the entity links (.NET's
  EnableCrossEntityTransactions puts every link on one session);
- declare = amqp-value described(ulong 0x31, []) -> disposition declared(0x33, [txn-id]);
- discharge = described(ulong 0x32, [txn-id, fail]) -> accepted, or rejected{error};
- a send in a transaction: transfer state transactional-state(0x34, [txn-id]);
- a settlement in a transaction: disposition transactional-state(0x34, [txn-id, outcome]).

Authentication is what the SDKs do: SASL ANONYMOUS (.NET's MSSBCBS is the same), then a SAS
token put on $cbs.
"""
import base64
import hashlib
import hmac
import time
import urllib.parse
import uuid

from proton import Data, Delivery, Described, Message, Terminus, ulong
from proton.utils import BlockingConnection

DECLARE, DISCHARGE, DECLARED, TXN_STATE = 0x31, 0x32, 0x33, 0x34
ACCEPTED, REJECTED, RELEASED, MODIFIED = 0x24, 0x25, 0x26, 0x27
WAIT = 10.0


def sas_token(audience, key_name, key):
    expiry = int(time.time()) + 3600
    enc = urllib.parse.quote_plus(audience)
    sig = base64.b64encode(hmac.new(key.encode(), ("%s\n%d" % (enc, expiry)).encode(), hashlib.sha256).digest())
    return "SharedAccessSignature sr=%s&sig=%s&se=%d&skn=%s" % (
        enc, urllib.parse.quote_plus(sig.decode()), expiry, key_name)


class RawClient:
    def __init__(self, port, key_name="RootManageSharedAccessKey", key="SAS_KEY_VALUE"):
        self.bc = BlockingConnection("amqp://127.0.0.1:%d" % port, timeout=WAIT, virtual_host="localhost",
                                     sasl_enabled=True, allowed_mechs="ANONYMOUS")
        self.conn = self.bc.conn
        self.ssn = self.conn.session()
        self.ssn.open()
        self._tags = 0
        reply = self.bc.create_receiver("$cbs", name="cbs-reply", credit=10)
        reply.link.target.address = "cbs-reply"
        req = self.bc.create_sender("$cbs")
        req.send(Message(id=1, reply_to="cbs-reply", body=sas_token("sb://localhost/", key_name, key),
                         properties={"operation": "put-token", "type": "servicebus.windows.net:sastoken",
                                     "name": "sb://localhost/"}))
        answer = reply.receive(timeout=WAIT)
        # the answer comes settled
        status = answer.properties.get("status-code")
        if status not in (200, 202):
            raise RuntimeError("put-token answered %r" % (answer.properties,))
        self.coordinator = None

    def close(self):
        self.bc.close()

    def _wait(self, cond, what):
        self.bc.wait(cond, timeout=WAIT, msg="waiting for " + what)

    def _open(self, link, what):
        link.open()
        self._wait(lambda: link.state & link.REMOTE_ACTIVE or link.state & link.REMOTE_CLOSED, what)
        return link

    # ---- links, all on one AMQP session (cross-entity transactions) ----

    def sender(self, address, properties=None):
        link = self.ssn.sender("snd-%s" % uuid.uuid4())
        link.target.address = address
        if properties:
            link.properties = properties
        return self._open(link, "sender attach to " + address)

    def receiver(self, address, credit=10):
        link = self.ssn.receiver("rcv-%s" % uuid.uuid4())
        link.source.address = address
        link.snd_settle_mode = link.SND_UNSETTLED
        link.rcv_settle_mode = link.RCV_SECOND  # PeekLock
        self._open(link, "receiver attach to " + address)
        link.flow(credit)
        return link

    def open_coordinator(self):
        link = self.ssn.sender("coordinator-%s" % uuid.uuid4())
        link.target.type = Terminus.COORDINATOR
        link.target.capabilities.put_array(False, Data.SYMBOL)
        link.target.capabilities.enter()
        link.target.capabilities.put_symbol("amqp:local-transactions")
        link.target.capabilities.exit()
        self.coordinator = self._open(link, "coordinator attach")
        self._wait(lambda: self.coordinator.credit > 0, "coordinator credit")
        return self.coordinator

    # ---- transfers ----

    def _transfer(self, link, msg, state_code=None, state_data=None):
        self._tags += 1
        dlv = link.delivery("t%d" % self._tags)
        link.send(msg.encode())
        if state_code:
            dlv.local.data = state_data
            dlv.update(state_code)
        link.advance()
        self._wait(lambda: dlv.remote_state or dlv.settled, "the answer to a transfer")
        return dlv

    def declare(self):
        """A txn-id (bytes), as .NET declares: described(ulong 0x31, [])."""
        if not self.coordinator:
            self.open_coordinator()
        dlv = self._transfer(self.coordinator, Message(body=Described(ulong(DECLARE), [])))
        if dlv.remote_state != DECLARED:
            raise RuntimeError("declare answered %s %s" % (dlv.remote_state, dlv.remote.condition))
        txn = bytes(dlv.remote.data[0])
        dlv.settle()
        return txn

    def discharge(self, txn, fail=False):
        """(True, None) when committed or rolled back, else (False, condition)."""
        dlv = self._transfer(self.coordinator, Message(body=Described(ulong(DISCHARGE), [txn, fail])))
        ok = dlv.remote_state == Delivery.ACCEPTED
        cond = dlv.remote.condition
        dlv.settle()
        return ok, cond

    def send(self, link, msg, txn=None):
        """The remote state and the delivery (transactional-state when txn)."""
        dlv = self._transfer(link, msg, TXN_STATE if txn else None, [txn] if txn else None)
        state, data, cond = dlv.remote_state, dlv.remote.data, dlv.remote.condition
        dlv.settle()
        return state, data, cond

    # ---- $management ----

    def mgmt(self, entity, operation, body, txn=None):
        """A $management request (in txn when given); the response message."""
        if not hasattr(self, "_mgmt"):
            self._mgmt = {}
        if entity not in self._mgmt:
            node = entity + "/$management"
            reply_to = "mgmt-reply-%s" % uuid.uuid4()
            rcv = self.ssn.receiver(reply_to)
            rcv.source.address = node
            rcv.target.address = reply_to
            self._open(rcv, "management reply link")
            rcv.flow(100)
            self._mgmt[entity] = (self.sender(node), rcv, reply_to)
        snd, rcv, reply_to = self._mgmt[entity]
        self._tags += 1
        req = Message(id=self._tags, reply_to=reply_to, properties={"operation": operation}, body=body)
        self.send(snd, req, txn)
        [d] = self.receive(rcv, 1)
        return d.message

    # ---- receiving and settling ----

    def receive(self, link, n):
        """n deliveries (Proton Delivery objects, with .message set)."""
        got = []

        def ready():
            while True:
                d = link.current
                if d is None or d.partial:
                    return len(got) >= n
                data = link.recv(d.pending)
                link.advance()
                m = Message()
                m.decode(data)
                d.message = m
                got.append(d)

        self._wait(ready, "%d messages" % n)
        return got

    def settle(self, dlv, outcome=ACCEPTED, txn=None, fields=None):
        """Settles dlv (PeekLock): outcome alone, or inside transactional-state when txn.
        Waits for the broker's disposition; returns (state, data, condition)."""
        if txn:
            dlv.local.data = [txn, Described(ulong(outcome), fields or [])]
            dlv.update(TXN_STATE)
        else:
            dlv.update(outcome)
        self._wait(lambda: dlv.settled, "the broker's disposition")
        return dlv.remote_state, dlv.remote.data, dlv.remote.condition
