"""MessageAPI (upstream message_api.py): a workspace inbox with contacts."""
from __future__ import annotations

import random

from .base import ApiSuite, pick

_DEFAULTS = {
    "generated_ids": set(),
    "user_count": 4,
    "user_map": {"Alice": "USR001", "Bob": "USR002", "Catherine": "USR003", "Daniel": "USR004"},
    "inbox": [{"USR002": "My name is Alice. I want to connect."}, {"USR003": "Could you upload the file?"},
              {"USR004": "Could you upload the file?"}],
    "message_count": 3,
    "current_user": None,
}
_DEFAULT_SEED = 200191


class MessageAPI(ApiSuite):
    def _setup(self, scenario, long_context, extensions) -> None:
        self._random = random.Random(scenario.get("random_seed", _DEFAULT_SEED))
        for key in _DEFAULTS:
            setattr(self, key, pick(scenario, key, _DEFAULTS[key]))

    def _new_id(self) -> dict:
        new = self._random.randint(10000, 99999)
        while new in self.generated_ids:
            new = self._random.randint(10000, 99999)
        self.generated_ids.add(new)
        return {"new_id": new}

    def _not_logged_in(self):
        return None if self.current_user else {"error": "No user is currently logged in."}

    def list_users(self):
        return {"user_list": list(self.user_map.keys())}

    def get_user_id(self, user: str):
        if user not in self.user_map:
            return {"error": f"User '{user}' not found in the workspace."}
        return {"user_id": self.user_map.get(user)}

    def message_login(self, user_id: str):
        if user_id not in list(self.user_map.values()):
            return {"login_status": False, "message": f"User ID '{user_id}' not found."}
        self.current_user = user_id
        return {"login_status": True, "message": f"User '{user_id}' logged in successfully."}

    def message_get_login_status(self):
        return {"login_status": bool(self.current_user)}

    def send_message(self, receiver_id: str, message: str):
        if err := self._not_logged_in():
            return err
        if receiver_id not in self.user_map.values():
            return {"error": f"Receiver ID '{receiver_id}' not found."}
        message_id = self._new_id()  # upstream returns the whole {"new_id": n} dict here
        self.inbox.append({receiver_id: message})
        self.message_count += 1
        return {"sent_status": True, "message_id": message_id,
                "message": f"Message sent to '{receiver_id}' successfully."}

    def delete_message(self, receiver_id: str):
        if err := self._not_logged_in():
            return err
        for entry in reversed(list(self.inbox)):  # the latest message to that receiver goes
            receiver = list(entry)[0]
            if receiver == receiver_id:
                self.inbox.remove(entry)
                return {"deleted_status": True, "message_id": receiver,
                        "message": f"Receiver {receiver_id}'s first message deleted successfully."}
        return {"error": f"Receiver ID {receiver_id} not found."}

    def view_messages_sent(self):
        if err := self._not_logged_in():
            return err
        grouped: dict = {}
        for entry in self.inbox:
            receiver, text = list(entry.items())[0]
            grouped.setdefault(receiver, []).append(text)
        return {"messages": grouped}

    def add_contact(self, user_name: str):
        if user_name in self.user_map:
            return {"error": f"User name '{user_name}' already exists."}
        self.user_count += 1
        user_id = f"USR{str(self.user_count).zfill(3)}"
        if user_id in self.user_map.values():
            return {"error": f"User ID '{user_id}' already exists."}
        self.user_map[user_name] = user_id
        return {"added_status": True, "user_id": user_id, "message": f"Contact '{user_name}' added successfully."}

    def search_messages(self, keyword: str):
        if err := self._not_logged_in():
            return err
        needle = keyword.lower()
        hits = []
        for entry in self.inbox:
            receiver, text = list(entry.items())[0]
            if needle in text.lower():
                hits.append({"receiver_id": receiver, "message": text})
        return {"results": hits}

    def get_message_stats(self):
        if err := self._not_logged_in():
            return err
        receivers = [list(entry)[0] for entry in self.inbox]
        return {"stats": {"received_count": len(receivers), "total_contacts": len(set(receivers))}}
