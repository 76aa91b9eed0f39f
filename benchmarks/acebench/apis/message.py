"""MessageApi: the phone's text messages (inbox keyed by int message id, capacity 6)."""
from __future__ import annotations

from datetime import datetime

from .base import BaseApi

_EN = {
    "send_not_logged_in": "Device not logged in, unable to send message",
    "send_wifi_off": "Wi-Fi is turned off, cannot send messages at this time",
    "inbox_full": "Inbox capacity is full. You need to ask the user which message to delete.",
    "no_such_party": "Sender or receiver does not exist",
    "sent": "Message successfully sent to {receiver}.",
    "delete_not_logged_in": "Device not logged in, unable to delete message",
    "no_such_id": "Message ID does not exist",
    "deleted": "Message ID {message_id} has been successfully deleted.",
    "view_not_logged_in": "Device not logged in, unable to view message information",
    "no_sender": "Sender does not exist",
    "no_receiver": "Receiver does not exist",
    "no_records": "No related message records found",
    "no_user": "User does not exist",
    "no_keyword_match": "No messages found containing the keyword",
    "times_not_logged_in": "Device not logged in, unable to retrieve all message times and their corresponding "
                           "message IDs.",
    "latest_not_logged_in": "Device not logged in, unable to retrieve the latest sent message ID.",
    "empty_inbox": "No message records found",
    "latest": "The latest message ID is {message_id}",
    "earliest_not_logged_in": "Device not logged in, unable to retrieve the earliest sent message ID.",
    "earliest": "The earliest message ID is {message_id}",
}

_ZH = {
    "send_not_logged_in": "device未登录，无法发送短信",
    "send_wifi_off": "wifi关闭，此时不能发送信息",
    "inbox_full": "内存容量不够了，你需要询问user删除哪一条短信。",
    "no_such_party": "发送者或接收者不存在",
    "sent": "短信成功发送给{receiver}。",
    "delete_not_logged_in": "device未登录，无法删除短信",
    "no_such_id": "短信ID不存在",
    "deleted": "短信ID {message_id} 已成功删除。",
    "view_not_logged_in": "device未登录，无法查看短信信息",
    "no_sender": "发送者不存在",
    "no_receiver": "接收者不存在",
    "no_records": "没有找到相关的短信记录",
    "no_user": "用户不存在",
    "no_keyword_match": "没有找到包含关键词的短信",
    "times_not_logged_in": "device未登录，获取所有短信的时间以及对应的短信编号。",
    "latest_not_logged_in": "device未登录，无法获取最新发送的短信ID。",
    "empty_inbox": "短信记录为空",
    "latest": "最新的短信ID是 {message_id}",
    "earliest_not_logged_in": "device未登录，无法获取最早发送的短信ID",
    "earliest": "最早的短信ID是 {message_id}",
}


def _fail(text: str) -> dict:
    return {"status": False, "message": text}


class MessageApi(BaseApi):
    _TEXT = {"en": _EN, "zh": _ZH}

    def send_message(self, sender_name, receiver_name, message):
        if self.logged_in == False:  # noqa: E712 -- upstream compares with ==
            return _fail(self._say("send_not_logged_in"))
        if self.wifi == False:  # noqa: E712
            return _fail(self._say("send_wifi_off"))
        if len(self.inbox) >= self.max_capacity:
            return _fail(self._say("inbox_full"))
        if sender_name not in self.user_list or receiver_name not in self.user_list:
            return _fail(self._say("no_such_party"))
        sender_id = self.user_list[sender_name]["user_id"]
        receiver_id = self.user_list[receiver_name]["user_id"]
        self.message_id_counter += 1
        # a sent message has no "time" (upstream), which later breaks get_latest/earliest_message_id
        self.inbox[self.message_id_counter] = {"sender_id": sender_id, "receiver_id": receiver_id,
                                               "message": message}
        return {"status": True, "message": self._say("sent", receiver=receiver_name)}

    def delete_message(self, message_id):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._say("delete_not_logged_in"))
        if message_id not in self.inbox:
            return _fail(self._say("no_such_id"))
        del self.inbox[message_id]
        return {"status": True, "message": self._say("deleted", message_id=message_id)}

    def view_messages_between_users(self, sender_name, receiver_name):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._say("view_not_logged_in"))
        if sender_name not in self.user_list:
            return _fail(self._say("no_sender"))
        if receiver_name not in self.user_list:
            return _fail(self._say("no_receiver"))
        sender_id = self.user_list[sender_name]["user_id"]
        receiver_id = self.user_list[receiver_name]["user_id"]
        found = [{"id": mid, "sender": sender_name, "receiver": receiver_name, "message": msg["message"]}
                 for mid, msg in self.inbox.items()
                 if msg["sender_id"] == sender_id and msg["receiver_id"] == receiver_id]
        if not found:
            return _fail(self._say("no_records"))
        return {"status": True, "messages": found}

    def search_messages(self, user_name, keyword):
        if user_name not in self.user_list:
            return _fail(self._say("no_user"))
        user_id = self.user_list[user_name]["user_id"]
        found = []
        for mid, msg in self.inbox.items():
            involved = msg["sender_id"] == user_id or msg["receiver_id"] == user_id
            if involved and keyword.lower() in msg["message"].lower():
                found.append({"id": mid, "sender_id": msg["sender_id"], "receiver_id": msg["receiver_id"],
                              "message": msg["message"]})
        if not found:
            return _fail(self._say("no_keyword_match"))
        return {"status": True, "messages": found}

    def get_all_message_times_with_ids(self):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._say("times_not_logged_in"))
        return {mid: msg["time"] for mid, msg in self.inbox.items()}

    def get_latest_message_id(self):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._say("latest_not_logged_in"))
        found = self._extreme_message_id(later=True)
        if found is _EMPTY:
            return _fail(self._say("empty_inbox"))
        return {"status": True, "message": self._say("latest", message_id=found), "message_id": found}

    def get_earliest_message_id(self):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._say("earliest_not_logged_in"))
        found = self._extreme_message_id(later=False)
        if found is _EMPTY:
            return _fail(self._say("empty_inbox"))
        return {"status": True, "message": self._say("earliest", message_id=found), "message_id": found}

    def _extreme_message_id(self, later: bool):
        """The id of the first message with the latest (earliest) day; KeyError 'time' on a sent message, as
        upstream."""
        if not self.inbox:
            return _EMPTY
        best_id = best_time = None
        for mid, msg in self.inbox.items():
            when = datetime.strptime(msg["time"], "%Y-%m-%d")
            if best_time is None or (when > best_time if later else when < best_time):
                best_time, best_id = when, mid
        return best_id


_EMPTY = object()
