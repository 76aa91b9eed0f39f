"""Deterministic mock answers for one short episode per benchmark, used to record the requests mua sends and
those the official runners send for the same episode (tests/harness/test_official_requests.py; the
fixtures' README says how the official side was recorded). Each answer depends only on the request."""
import json

from mock_openai import text_reply, tool_call_reply


def _said(request: dict) -> int:
    return sum(1 for m in request["messages"] if m["role"] == "assistant")


def _has_tool_result(request: dict) -> bool:
    return any(m["role"] == "tool" for m in request["messages"])


def tau2_retail(request: dict) -> dict:
    """Task 2: the user gives name and zip, the agent looks the user up once, answers, the user stops; any
    other model name is the NL-assertion judge, which finds every assertion met."""
    model = request.get("model")
    if model == "agent":
        if _has_tool_result(request):
            return text_reply("I found your account. Is there anything else I can help with?")
        return tool_call_reply([("find_user_id_by_name_zip",
                                 {"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"})])
    if model == "user":
        return text_reply("Hi, I am Yusuf Rossi, zip code 19122." if _said(request) == 0 else "Thanks! ###STOP###")
    return text_reply(json.dumps({"results": [{"expectedOutcome": "met", "reasoning": "mock",
                                               "metExpectation": True}]}))


def bfcl(request: dict) -> dict:
    """Lists the current directory once per user turn, then answers in text (which ends the turn)."""
    if request["messages"][-1]["role"] == "tool":
        return text_reply("Done.")
    return tool_call_reply([("ls", {})])


def acebench(request: dict) -> dict:
    """The agent answers in text; the user asks once, then finishes the conversation. (The official runner
    names its models itself: any model name with "agent" in it is the agent.)"""
    if "agent" in str(request.get("model")):
        return text_reply("I have done what you asked.")
    # the user's own earlier replies: ACEBench's user simulator sends them back with role "system"
    said = sum(1 for m in request["messages"][1:] if m["role"] in ("assistant", "system"))
    return text_reply("Please send a message to Frank." if said < 2 else "finish conversation")
