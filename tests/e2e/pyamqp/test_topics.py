"""Topics and subscriptions with SQL and correlation rules made through
ServiceBusAdministrationClient (create_rule, delete_rule), routing what azure-servicebus 7.15 sends,
sync and aio; a rule action stamps the copy; a session subscription; the dead-letter subqueue of a
subscription."""
import pytest
from azure.servicebus import ServiceBusClient, ServiceBusMessage, ServiceBusReceiveMode, ServiceBusSubQueue
from azure.servicebus.aio import ServiceBusClient as AsyncServiceBusClient
from azure.servicebus.aio.management import ServiceBusAdministrationClient as AsyncAdmin
from azure.servicebus.management import (CorrelationRuleFilter, ServiceBusAdministrationClient, SqlRuleAction,
                                         SqlRuleFilter)

TOPICS = [{"name": "cfg-topic", "subscriptions": [{"name": "cfg-red", "rules": [{
    "Name": "red", "Properties": {"FilterType": "Sql", "SqlFilter": {"SqlExpression": "color = 'red'"}}}]}]}]


def receive_all(r, want, wait=5):
    got = []
    while len(got) < want:
        batch = r.receive_messages(max_message_count=want - len(got) + 1, max_wait_time=wait)
        if not batch:
            break
        got += batch
    return got


async def areceive_all(r, want, wait=5):
    got = []
    while len(got) < want:
        batch = await r.receive_messages(max_message_count=want - len(got) + 1, max_wait_time=wait)
        if not batch:
            break
        got += batch
    return got


def make_routing(admin, topic):
    admin.create_topic(topic)
    for sub in ("all", "sql", "corr", "action", "none"):
        admin.create_subscription(topic, sub)
    for sub in ("sql", "corr", "action", "none"):
        admin.delete_rule(topic, sub, "$Default")
    admin.create_rule(topic, "sql", "big-red", filter=SqlRuleFilter("color = @c AND qty >= @min",
                                                                    parameters={"@c": "red", "@min": 10}))
    admin.create_rule(topic, "corr", "eu-orders", filter=CorrelationRuleFilter(label="order",
                                                                               properties={"region": "eu"}))
    admin.create_rule(topic, "action", "stamp", filter=SqlRuleFilter("sys.Label = 'order'"),
                      action=SqlRuleAction("SET routed = 'by-action'; SET qty = qty * 2"))


MESSAGES = [
    dict(id="red-12", subject="order", props={"color": "red", "qty": 12, "region": "eu"}),
    dict(id="red-3", subject="order", props={"color": "red", "qty": 3, "region": "us"}),
    dict(id="blue-20", subject="note", props={"color": "blue", "qty": 20, "region": "eu"}),
]


def outgoing():
    return [ServiceBusMessage(m["id"], message_id=m["id"], subject=m["subject"], application_properties=m["props"])
            for m in MESSAGES]


EXPECTED = {
    "all": ["red-12", "red-3", "blue-20"],
    "sql": ["red-12"],
    "corr": ["red-12"],
    "action": ["red-12", "red-3"],
    "none": [],
}


def test_sql_and_correlation_rules_route(emu):
    with ServiceBusAdministrationClient.from_connection_string(emu.connection_string, connection_verify=emu.cert_path) as admin:
        make_routing(admin, "routes")
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb:
        with sb.get_topic_sender("routes") as s:
            s.send_messages(outgoing())
        got = {}
        for sub, want in EXPECTED.items():
            with sb.get_subscription_receiver("routes", sub, receive_mode=ServiceBusReceiveMode.RECEIVE_AND_DELETE) as r:
                got[sub] = receive_all(r, len(want), wait=5 if want else 2)
        assert {k: [m.message_id for m in v] for k, v in got.items()} == EXPECTED
        # every copy carries the topic's sequence number
        assert got["all"][0].sequence_number == got["sql"][0].sequence_number == got["corr"][0].sequence_number
        stamped = {m.message_id: m.application_properties for m in got["action"]}
        assert stamped["red-12"][b"routed"] == b"by-action" and stamped["red-12"][b"qty"] == 24
        assert stamped["red-3"][b"qty"] == 6
        assert got["sql"][0].application_properties.get(b"routed") is None, "only the action's copy is changed"


def test_rules_changed_later_route_later_sends(emu):
    with ServiceBusAdministrationClient.from_connection_string(emu.connection_string, connection_verify=emu.cert_path) as admin:
        admin.create_topic("later")
        admin.create_subscription("later", "s")
        admin.delete_rule("later", "s", "$Default")
        with ServiceBusClient.from_connection_string(emu.connection_string) as sb:
            with sb.get_topic_sender("later") as s:
                s.send_messages(ServiceBusMessage("dropped", message_id="dropped", application_properties={"k": 1}))
                admin.create_rule("later", "s", "k1", filter=SqlRuleFilter("k = 1"))
                s.send_messages(ServiceBusMessage("kept", message_id="kept", application_properties={"k": 1}))
            with sb.get_subscription_receiver("later", "s") as r:
                got = receive_all(r, 1)
                assert [m.message_id for m in got] == ["kept"]
                r.dead_letter_message(got[0], reason="check the subscription's DLQ")
            with sb.get_subscription_receiver("later", "s", sub_queue=ServiceBusSubQueue.DEAD_LETTER) as d:
                (x,) = d.receive_messages(max_wait_time=10)
                assert x.message_id == "kept" and x.dead_letter_reason == "check the subscription's DLQ"
                d.complete_message(x)


def test_config_json_rule_and_session_subscription(emu):
    with ServiceBusAdministrationClient.from_connection_string(emu.connection_string, connection_verify=emu.cert_path) as admin:
        (rule,) = admin.list_rules("cfg-topic", "cfg-red")
        assert rule.name == "red" and rule.filter.sql_expression == "color = 'red'"
        admin.create_subscription("cfg-topic", "sessions", requires_session=True)
    with ServiceBusClient.from_connection_string(emu.connection_string) as sb:
        with sb.get_topic_sender("cfg-topic") as s:
            s.send_messages([ServiceBusMessage("r", message_id="r", session_id="S1", application_properties={"color": "red"}),
                             ServiceBusMessage("g", message_id="g", session_id="S1", application_properties={"color": "green"})])
        with sb.get_subscription_receiver("cfg-topic", "cfg-red") as r:
            got = receive_all(r, 1)
            assert [m.message_id for m in got] == ["r"]
            r.complete_message(got[0])
        with sb.get_subscription_receiver("cfg-topic", "sessions", session_id="S1") as r:
            got = receive_all(r, 2)
            assert [m.message_id for m in got] == ["r", "g"]
            for m in got:
                r.complete_message(m)


async def test_aio_rules_route(emu):
    async with AsyncAdmin.from_connection_string(emu.connection_string, connection_verify=emu.cert_path) as admin:
        await admin.create_topic("aio-routes")
        for sub in ("sql", "corr"):
            await admin.create_subscription("aio-routes", sub)
            await admin.delete_rule("aio-routes", sub, "$Default")
        await admin.create_rule("aio-routes", "sql", "r", filter=SqlRuleFilter("qty > 5"))
        await admin.create_rule("aio-routes", "corr", "r", filter=CorrelationRuleFilter(correlation_id="c-1"))
    async with AsyncServiceBusClient.from_connection_string(emu.connection_string) as sb:
        async with sb.get_topic_sender("aio-routes") as s:
            await s.send_messages([
                ServiceBusMessage("a", message_id="a", application_properties={"qty": 9}),
                ServiceBusMessage("b", message_id="b", correlation_id="c-1", application_properties={"qty": 1}),
            ])
        async with sb.get_subscription_receiver("aio-routes", "sql") as r:
            got = await areceive_all(r, 1)
            assert [m.message_id for m in got] == ["a"]
            await r.complete_message(got[0])
            assert await r.receive_messages(max_wait_time=1) == []
        async with sb.get_subscription_receiver("aio-routes", "corr") as r:
            got = await areceive_all(r, 1)
            assert [m.message_id for m in got] == ["b"]
            await r.complete_message(got[0])
