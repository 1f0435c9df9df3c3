"""PostgreSQL taken away under azure-servicebus 7.15 (as tests/e2e/js/pg_outage.test.js does it: the
embedded cluster's data directory is moved aside, so sbemu cannot restart it, and the postmaster is
killed): sbemu answers com.microsoft:server-busy, which the SDK raises as ServiceBusServerBusyError
without retries and retries otherwise; a send started during the outage goes through once the data
directory is back and sbemu has restarted the cluster. Sync and aio."""
import asyncio
import logging
import os
import signal
import threading
import time

import pytest
from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusReceiveMode
from azure.servicebus.aio import ServiceBusClient as AsyncServiceBusClient
from azure.servicebus.exceptions import ServiceBusServerBusyError

from conftest import wait_until

QUEUES = ["outage"]
# a retry every 0.5 s, for up to 30 s
RETRY = dict(retry_total=60, retry_backoff_factor=0.5, retry_backoff_max=1, retry_mode="fixed")


class Retries(logging.Handler):
    """Counts the SDK's 'has an exception (ServiceBusServerBusyError...). Retrying...' lines."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.busy = 0

    def emit(self, record):
        msg = record.getMessage()
        if "Retrying" in msg and "ServerBusy" in msg:
            self.busy += 1


@pytest.fixture
def retries():
    h = Retries()
    log = logging.getLogger("azure.servicebus")
    old = log.level
    log.setLevel(logging.INFO)
    log.addHandler(h)
    yield h
    log.removeHandler(h)
    log.setLevel(old)


def take_postgres_away(emu):
    data = emu.pg_dir()
    pid = emu.postmaster_pid()
    assert pid, "no postmaster.pid"
    os.rename(data, data + ".away")
    os.kill(pid, signal.SIGKILL)
    emu.wait_health(503, 15)
    return pid


def bring_postgres_back(emu, old_pid):
    os.rename(emu.pg_dir() + ".away", emu.pg_dir())
    emu.wait_health(200, 30)
    new_pid = wait_until(emu.postmaster_pid, 10, "a new postmaster.pid")
    assert new_pid != old_pid, "sbemu started a new postmaster"


def drain_ids(emu):
    ids = []
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb:
        with sb.get_queue_receiver("outage", receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
            while True:
                got = r.receive_messages(max_message_count=50, max_wait_time=3)
                if not got:
                    return ids
                ids += [m.message_id for m in got]


def test_server_busy_then_retries_carry_a_send_through(emu, retries):
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb, sb.get_queue_sender("outage") as s:
        s.send_messages([ServiceBusMessage("b", message_id="before-%d" % i) for i in range(5)])
    old = take_postgres_away(emu)
    try:
        with ServiceBusClient.from_connection_string(emu.connection_string, retry_total=0) as sb:
            with sb.get_queue_sender("outage") as s:
                with pytest.raises(ServiceBusServerBusyError, match="(?i)database|postgres"):
                    s.send_messages(ServiceBusMessage("no retries", message_id="never"))
        # a sender with retries, started during the outage
        outcome = {}

        def send_with_retries():
            try:
                with ServiceBusClient.from_connection_string(emu.connection_string, **RETRY) as sb2:
                    with sb2.get_queue_sender("outage") as s2:
                        s2.send_messages(ServiceBusMessage("retried", message_id="retried"))
                outcome["ok"] = True
            except Exception as e:  # reported below
                outcome["error"] = e

        t = threading.Thread(target=send_with_retries, daemon=True)
        t.start()
        wait_until(lambda: retries.busy >= 2, 20, "the SDK retrying on server-busy")
        assert t.is_alive(), outcome
    finally:
        if os.path.exists(emu.pg_dir() + ".away"):
            bring_postgres_back(emu, old)
    t.join(60)
    assert outcome == {"ok": True}, outcome
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb, sb.get_queue_sender("outage") as s:
        s.send_messages(ServiceBusMessage("a", message_id="after"))
    ids = drain_ids(emu)
    assert sorted(ids) == sorted(["before-%d" % i for i in range(5)] + ["retried", "after"]), ids
    assert "PostgreSQL is back after" in emu.log()


async def test_aio_server_busy_then_retries_carry_a_send_through(emu, retries):
    old = take_postgres_away(emu)
    try:
        async with AsyncServiceBusClient.from_connection_string(emu.connection_string, retry_total=0) as sb:
            async with sb.get_queue_sender("outage") as s:
                with pytest.raises(ServiceBusServerBusyError):
                    await s.send_messages(ServiceBusMessage("no retries", message_id="never"))

        async def send_with_retries():
            async with AsyncServiceBusClient.from_connection_string(emu.connection_string, **RETRY) as sb2:
                async with sb2.get_queue_sender("outage") as s2:
                    await s2.send_messages(ServiceBusMessage("retried", message_id="aio-retried"))

        task = asyncio.ensure_future(send_with_retries())
        deadline = time.monotonic() + 20
        while retries.busy < 2:
            assert not task.done(), task.exception() if task.done() else None
            assert time.monotonic() < deadline, "the aio SDK did not retry on server-busy"
            await asyncio.sleep(0.1)
    finally:
        if os.path.exists(emu.pg_dir() + ".away"):
            await asyncio.get_running_loop().run_in_executor(None, bring_postgres_back, emu, old)
    await asyncio.wait_for(task, 60)
    assert drain_ids(emu) == ["aio-retried"]
