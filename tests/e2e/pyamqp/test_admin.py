"""ServiceBusAdministrationClient of azure-servicebus 7.15, sync and aio: create, get, update,
delete and list queues, topics, subscriptions and rules; runtime properties; namespace properties.

How it dials: from_connection_string keeps the Endpoint's host:port and always speaks https://
(UseDevelopmentEmulator=true only turns TLS off for AMQP; the admin client's "https://" is fixed),
so it reaches https://localhost:<amqp-port>/..., which sbemu serves (TLS told from AMQP by the first
bytes) with its self-signed certificate. What a user does: pass connection_verify=<data-dir>/tls/
cert.pem (or set REQUESTS_CA_BUNDLE for the sync client), nothing else."""
import datetime

import pytest
from azure.core.exceptions import ResourceExistsError, ResourceNotFoundError
from azure.core.pipeline.transport import RequestsTransport
from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusSubQueue
from azure.servicebus.aio.management import ServiceBusAdministrationClient as AsyncAdmin
from azure.servicebus.management import (CorrelationRuleFilter, FalseRuleFilter, ServiceBusAdministrationClient,
                                         SqlRuleAction, SqlRuleFilter, TrueRuleFilter)

QUEUES = ["existing-q"]
TOPICS = [{"name": "existing-t", "subscriptions": [{"name": "existing-s"}]}]

td = datetime.timedelta


@pytest.fixture
def admin(emu):
    with ServiceBusAdministrationClient.from_connection_string(emu.connection_string,
                                                               connection_verify=emu.cert_path) as a:
        yield a


@pytest.fixture
async def aadmin(emu):
    async with AsyncAdmin.from_connection_string(emu.connection_string, connection_verify=emu.cert_path) as a:
        yield a


class RecordingTransport(RequestsTransport):
    def __init__(self, **kw):
        super().__init__(**kw)
        self.urls = []

    def send(self, request, **kw):
        self.urls.append(request.url)
        return super().send(request, **kw)


def test_dials_https_on_the_endpoint_port(emu):
    t = RecordingTransport(connection_verify=emu.cert_path)
    with ServiceBusAdministrationClient.from_connection_string(emu.connection_string, transport=t) as a:
        assert a.get_queue("existing-q").name == "existing-q"
    assert t.urls and all(u.startswith("https://localhost:%d/" % emu.amqp_port) for u in t.urls), t.urls
    # without the certificate, the TLS handshake is refused by the client
    from azure.core.exceptions import ServiceRequestError
    with ServiceBusAdministrationClient.from_connection_string(emu.connection_string, retry_total=0) as a:
        with pytest.raises(ServiceRequestError, match="CERTIFICATE_VERIFY_FAILED"):
            a.get_queue("existing-q")


def test_requests_ca_bundle_instead_of_connection_verify(emu, monkeypatch):
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", emu.cert_path)  # requests trusts it when verify is left True
    with ServiceBusAdministrationClient.from_connection_string(emu.connection_string) as a:
        assert a.get_namespace_properties().name == "sbemulatorns"


def test_namespace_properties(admin):
    ns = admin.get_namespace_properties()
    assert ns.name == "sbemulatorns"
    assert ns.messaging_sku == "Standard"
    assert ns.namespace_type == "Messaging"
    assert ns.created_at_utc <= ns.modified_at_utc


def test_queue_create_get_update_list_delete(admin):
    q = admin.create_queue(
        "adm-q",
        lock_duration=td(seconds=45),
        max_delivery_count=7,
        default_message_time_to_live=td(hours=2),
        dead_lettering_on_message_expiration=True,
        requires_duplicate_detection=True,
        duplicate_detection_history_time_window=td(minutes=5),
        max_size_in_megabytes=2048,
        auto_delete_on_idle=td(hours=3),
        enable_batched_operations=True,
        user_metadata="made by pyamqp",
    )
    assert q.name == "adm-q"
    got = admin.get_queue("adm-q")
    assert got.lock_duration == td(seconds=45)
    assert got.max_delivery_count == 7
    assert got.default_message_time_to_live == td(hours=2)
    assert got.dead_lettering_on_message_expiration is True
    assert got.requires_duplicate_detection is True
    assert got.duplicate_detection_history_time_window == td(minutes=5)
    assert got.max_size_in_megabytes == 2048
    assert got.auto_delete_on_idle == td(hours=3)
    assert got.requires_session is False
    assert got.status == "Active"
    assert got.user_metadata == "made by pyamqp"
    with pytest.raises(ResourceExistsError):
        admin.create_queue("adm-q")
    got.max_delivery_count = 3
    got.lock_duration = td(seconds=20)
    got.forward_to = "existing-q"
    admin.update_queue(got)
    again = admin.get_queue("adm-q")
    assert (again.max_delivery_count, again.lock_duration) == (3, td(seconds=20))
    assert again.forward_to and again.forward_to.endswith("/existing-q")
    again.forward_to = None
    again.status = "SendDisabled"
    admin.update_queue(again)
    assert admin.get_queue("adm-q").status == "SendDisabled"
    names = [x.name for x in admin.list_queues()]
    assert "adm-q" in names and "existing-q" in names
    assert {x.name for x in admin.list_queues_runtime_properties()} >= {"adm-q", "existing-q"}
    admin.delete_queue("adm-q")
    with pytest.raises(ResourceNotFoundError):
        admin.get_queue("adm-q")
    with pytest.raises(ResourceNotFoundError):
        admin.delete_queue("adm-q")


def test_queue_runtime_properties_count_what_amqp_did(admin, emu):
    admin.create_queue("adm-counts")
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb:
        with sb.get_queue_sender("adm-counts") as s:
            s.send_messages([ServiceBusMessage("m%d" % i) for i in range(3)])
            s.schedule_messages(ServiceBusMessage("later"), emu.clock_now() + td(hours=1))
        with sb.get_queue_receiver("adm-counts") as r:
            (m,) = r.receive_messages(max_wait_time=10)
            r.dead_letter_message(m, reason="x")
    rt = admin.get_queue_runtime_properties("adm-counts")
    assert rt.name == "adm-counts"
    assert rt.active_message_count == 2
    assert rt.dead_letter_message_count == 1
    assert rt.scheduled_message_count == 1
    assert rt.total_message_count == 4
    assert rt.size_in_bytes > 0
    assert rt.transfer_message_count == 0 and rt.transfer_dead_letter_message_count == 0
    assert rt.created_at_utc <= rt.updated_at_utc
    assert rt.accessed_at_utc >= rt.created_at_utc
    listed = {x.name: x for x in admin.list_queues_runtime_properties()}
    assert listed["adm-counts"].active_message_count == 2


def test_queues_list_by_page(admin):
    for i in range(12):
        admin.create_queue("page-%02d" % i)
    pages = list(admin.list_queues().by_page())
    names = [q.name for p in pages for q in p]
    assert [n for n in names if n.startswith("page-")] == ["page-%02d" % i for i in range(12)]
    assert len(names) == len(set(names))
    for i in range(12):
        admin.delete_queue("page-%02d" % i)


def test_topic_and_subscription_crud(admin):
    t = admin.create_topic("adm-t", default_message_time_to_live=td(hours=4), max_size_in_megabytes=1024,
                           requires_duplicate_detection=True,
                           duplicate_detection_history_time_window=td(minutes=2))
    assert t.name == "adm-t"
    got = admin.get_topic("adm-t")
    assert got.default_message_time_to_live == td(hours=4)
    assert got.max_size_in_megabytes == 1024
    assert got.requires_duplicate_detection is True
    assert got.support_ordering is True
    got.default_message_time_to_live = td(hours=1)
    admin.update_topic(got)
    assert admin.get_topic("adm-t").default_message_time_to_live == td(hours=1)
    with pytest.raises(ResourceExistsError):
        admin.create_topic("adm-t")

    s = admin.create_subscription("adm-t", "sub-a", lock_duration=td(seconds=30), max_delivery_count=4,
                                  dead_lettering_on_message_expiration=True, requires_session=False,
                                  dead_lettering_on_filter_evaluation_exceptions=True)
    assert s.name == "sub-a"
    admin.create_subscription("adm-t", "sub-b")
    gs = admin.get_subscription("adm-t", "sub-a")
    assert gs.lock_duration == td(seconds=30) and gs.max_delivery_count == 4
    assert gs.dead_lettering_on_message_expiration is True
    assert gs.dead_lettering_on_filter_evaluation_exceptions is True
    gs.max_delivery_count = 9
    admin.update_subscription("adm-t", gs)
    assert admin.get_subscription("adm-t", "sub-a").max_delivery_count == 9
    assert [x.name for x in admin.list_subscriptions("adm-t")] == ["sub-a", "sub-b"]
    with pytest.raises(ResourceExistsError):
        admin.create_subscription("adm-t", "sub-a")
    # a new subscription starts with $Default (TrueFilter)
    (d,) = admin.list_rules("adm-t", "sub-b")
    assert d.name == "$Default" and isinstance(d.filter, TrueRuleFilter)

    trt = admin.get_topic_runtime_properties("adm-t")
    assert trt.subscription_count == 2
    assert "adm-t" in {x.name for x in admin.list_topics()}
    assert "adm-t" in {x.name for x in admin.list_topics_runtime_properties()}
    admin.delete_subscription("adm-t", "sub-b")
    with pytest.raises(ResourceNotFoundError):
        admin.get_subscription("adm-t", "sub-b")
    admin.delete_topic("adm-t")
    with pytest.raises(ResourceNotFoundError):
        admin.get_topic("adm-t")
    with pytest.raises(ResourceNotFoundError):
        admin.get_subscription("adm-t", "sub-a")


def test_subscription_runtime_properties(admin, emu):
    admin.create_topic("adm-rt")
    admin.create_subscription("adm-rt", "all")
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb:
        with sb.get_topic_sender("adm-rt") as s:
            s.send_messages([ServiceBusMessage("a"), ServiceBusMessage("b")])
        with sb.get_subscription_receiver("adm-rt", "all") as r:
            (m,) = r.receive_messages(max_wait_time=10)
            r.dead_letter_message(m)
    rt = admin.get_subscription_runtime_properties("adm-rt", "all")
    assert (rt.active_message_count, rt.dead_letter_message_count, rt.total_message_count) == (1, 1, 2)
    assert {x.name: x.active_message_count for x in admin.list_subscriptions_runtime_properties("adm-rt")} == {"all": 1}
    # the dead-lettered one is there, in the subscription's dead-letter subqueue
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb:
        with sb.get_subscription_receiver("adm-rt", "all", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as d:
            (x,) = d.receive_messages(max_wait_time=10)
            d.complete_message(x)


def test_rule_crud_every_filter_kind(admin):
    admin.create_topic("adm-rules")
    admin.create_subscription("adm-rules", "s")
    admin.create_rule("adm-rules", "s", "sql", filter=SqlRuleFilter("color = @c AND qty > @n",
                                                                    parameters={"@c": "red", "@n": 5}),
                      action=SqlRuleAction("SET stamped = 'yes'"))
    admin.create_rule("adm-rules", "s", "corr", filter=CorrelationRuleFilter(
        correlation_id="cid", label="subj", content_type="ct", message_id="mid", to="to", reply_to="rt",
        session_id="sid", reply_to_session_id="rts", properties={"region": "eu", "n": 3, "ok": True}))
    admin.create_rule("adm-rules", "s", "never", filter=FalseRuleFilter())
    with pytest.raises(ResourceExistsError):
        admin.create_rule("adm-rules", "s", "sql", filter=TrueRuleFilter())

    sql = admin.get_rule("adm-rules", "s", "sql")
    assert isinstance(sql.filter, SqlRuleFilter)
    assert sql.filter.sql_expression == "color = @c AND qty > @n"
    assert sql.filter.parameters == {"@c": "red", "@n": 5}
    assert sql.action.sql_expression == "SET stamped = 'yes'"
    corr = admin.get_rule("adm-rules", "s", "corr")
    f = corr.filter
    assert isinstance(f, CorrelationRuleFilter)
    assert (f.correlation_id, f.label, f.content_type, f.message_id, f.to, f.reply_to, f.session_id,
            f.reply_to_session_id) == ("cid", "subj", "ct", "mid", "to", "rt", "sid", "rts")
    assert f.properties == {"region": "eu", "n": 3, "ok": True}
    assert isinstance(admin.get_rule("adm-rules", "s", "never").filter, FalseRuleFilter)
    assert [r.name for r in admin.list_rules("adm-rules", "s")] == ["$Default", "corr", "never", "sql"]

    sql.filter = SqlRuleFilter("color = 'blue'")
    sql.action = None
    admin.update_rule("adm-rules", "s", sql)
    upd = admin.get_rule("adm-rules", "s", "sql")
    assert upd.filter.sql_expression == "color = 'blue'" and upd.action is None
    admin.delete_rule("adm-rules", "s", "never")
    admin.delete_rule("adm-rules", "s", "$Default")
    assert [r.name for r in admin.list_rules("adm-rules", "s")] == ["corr", "sql"]
    with pytest.raises(ResourceNotFoundError):
        admin.get_rule("adm-rules", "s", "never")
    with pytest.raises(ResourceNotFoundError):
        admin.delete_rule("adm-rules", "s", "never")
    admin.delete_topic("adm-rules")


def test_config_entities_read_back(admin):
    q = admin.get_queue("existing-q")
    assert q.lock_duration == td(minutes=1) and q.max_delivery_count == 10
    assert admin.get_subscription("existing-t", "existing-s").name == "existing-s"


def test_wrong_key_is_client_authentication_error(emu):
    from azure.core.exceptions import ClientAuthenticationError
    with ServiceBusAdministrationClient.from_connection_string(emu.connection_string_with_key("wrong"),
                                                               connection_verify=emu.cert_path) as a:
        with pytest.raises(ClientAuthenticationError):
            a.get_queue("existing-q")


# ---- aio ----

async def test_aio_namespace_and_queue_crud(aadmin):
    assert (await aadmin.get_namespace_properties()).name == "sbemulatorns"
    await aadmin.create_queue("aio-q", max_delivery_count=5, requires_session=True)
    q = await aadmin.get_queue("aio-q")
    assert q.max_delivery_count == 5 and q.requires_session is True
    q.max_delivery_count = 6
    await aadmin.update_queue(q)
    assert (await aadmin.get_queue("aio-q")).max_delivery_count == 6
    assert "aio-q" in [x.name async for x in aadmin.list_queues()]
    rt = await aadmin.get_queue_runtime_properties("aio-q")
    assert rt.total_message_count == 0
    assert "aio-q" in [x.name async for x in aadmin.list_queues_runtime_properties()]
    await aadmin.delete_queue("aio-q")
    with pytest.raises(ResourceNotFoundError):
        await aadmin.get_queue("aio-q")


async def test_aio_topic_subscription_rule_crud(aadmin):
    await aadmin.create_topic("aio-t")
    t = await aadmin.get_topic("aio-t")
    t.default_message_time_to_live = td(minutes=30)
    await aadmin.update_topic(t)
    assert (await aadmin.get_topic("aio-t")).default_message_time_to_live == td(minutes=30)
    await aadmin.create_subscription("aio-t", "s", max_delivery_count=2)
    s = await aadmin.get_subscription("aio-t", "s")
    s.max_delivery_count = 3
    await aadmin.update_subscription("aio-t", s)
    assert (await aadmin.get_subscription("aio-t", "s")).max_delivery_count == 3
    assert [x.name async for x in aadmin.list_subscriptions("aio-t")] == ["s"]
    assert (await aadmin.get_subscription_runtime_properties("aio-t", "s")).active_message_count == 0
    assert [x.name async for x in aadmin.list_subscriptions_runtime_properties("aio-t")] == ["s"]
    assert (await aadmin.get_topic_runtime_properties("aio-t")).subscription_count == 1
    assert "aio-t" in [x.name async for x in aadmin.list_topics()]
    assert "aio-t" in [x.name async for x in aadmin.list_topics_runtime_properties()]
    await aadmin.create_rule("aio-t", "s", "r", filter=CorrelationRuleFilter(label="x", properties={"k": "v"}))
    r = await aadmin.get_rule("aio-t", "s", "r")
    assert r.filter.label == "x" and r.filter.properties == {"k": "v"}
    r.filter = SqlRuleFilter("k = 'w'")
    await aadmin.update_rule("aio-t", "s", r)
    assert (await aadmin.get_rule("aio-t", "s", "r")).filter.sql_expression == "k = 'w'"
    assert [x.name async for x in aadmin.list_rules("aio-t", "s")] == ["$Default", "r"]
    await aadmin.delete_rule("aio-t", "s", "r")
    await aadmin.delete_subscription("aio-t", "s")
    await aadmin.delete_topic("aio-t")
    with pytest.raises(ResourceNotFoundError):
        await aadmin.get_topic("aio-t")
