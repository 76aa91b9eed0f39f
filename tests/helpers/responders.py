"""Mock-server responders for the benchmark scripts: a retail customer checking an order, and an agent that
looks the order up. Stateless: each answer depends only on the request, as the mock server requires."""
from mock_openai import by_model, text_reply, tool_call_reply

ORDER = "#W2611340"


def agent(request: dict) -> dict:
    if request["messages"][-1]["role"] == "tool":
        return text_reply("Your order is on its way. Anything else?")
    return tool_call_reply([("get_order_details", {"order_id": ORDER})])


def user(request: dict) -> dict:
    said = sum(1 for m in request["messages"] if m["role"] == "assistant")
    return text_reply(f"Please check my order {ORDER}." if said < 2 else "Thanks! ###STOP###")


retail = by_model({"agent": agent, "user": user})
