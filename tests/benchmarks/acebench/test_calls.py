from __future__ import annotations

import pytest

from mua.benchmarks.acebench.calls import CallSyntaxError, ParsedCall, parse_calls, render_message


def test_parse_and_render_round_trip():
    text = "[send_message(sender_name='Eve', receiver_name='Frank', message='hi'), delete_message(message_id=3)]"
    calls = parse_calls(text)
    assert calls == [ParsedCall("send_message", {"sender_name": "Eve", "receiver_name": "Frank", "message": "hi"}),
                     ParsedCall("delete_message", {"message_id": 3})]
    assert render_message(calls) == text


def test_nested_literals_and_negative_numbers():
    calls = parse_calls("[f(items=[{'product': 'A', 'quantity': 2}], n=-1, ok=True, x=None)]")
    assert calls[0].args == {"items": [{"product": "A", "quantity": 2}], "n": -1, "ok": True, "x": None}


def test_repairs_upstream_milestone_defects():
    assert parse_calls("[view_messages_between_users(sender_name='Eve', receiver_name='Frank')] ")[0].args == {
        "sender_name": "Eve", "receiver_name": "Frank"}
    call = parse_calls("[send_message(sender_name='Eve', message='Don't forget tomorrow afternoon's meeting')]")[0]
    assert call.args["message"] == "Don't forget tomorrow afternoon's meeting"
    assert parse_calls("[f(merchant_name='Domino's', items=[])]")[0].args == {"merchant_name": "Domino's",
                                                                            "items": []}


@pytest.mark.parametrize("bad", ["[f(x=g())]", "[f(1)]", "[x + 1]", "[f(**kw)]", "[os.system(x='1')]", "[f(x=y)]"])
def test_rejects_non_literals(bad):
    with pytest.raises(CallSyntaxError):
        parse_calls(bad)
