"""ReminderApi: reminders keyed by int id (capacity 6). The zh class has two more methods than the en one."""
from __future__ import annotations

from .base import BaseApi

_EN = {
    "view_not_logged_in": "The device is not logged in, so you cannot view notifications",
    "no_title": "No reminder found with the title '{title}'.",
    "add_not_logged_in": "Device not logged in. Unable to add a new reminder.",
    "full": "Reminder capacity is full. Unable to add a new reminder.",
    "added": "Reminder '{title}' was successfully added.",
    "delete_not_logged_in": "Device not logged in. Unable to delete the specified reminder.",
    "no_id": "Reminder ID does not exist.",
    "deleted": "Reminder ID {reminder_id} was successfully deleted.",
    "none": "No reminders found.",
}

_ZH = {
    "view_not_logged_in": "device未登录，无法查看提醒",
    "no_title": "没有找到标题为 '{title}' 的提醒",
    "add_not_logged_in": "device未登录，无法添加一个新的提醒",
    "full": "提醒容量已满，无法添加新的提醒",
    "added": "提醒 '{title}' 已成功添加",
    "delete_not_logged_in": "device未登录，无法删除指定的提醒",
    "no_id": "提醒ID不存在",
    "deleted": "提醒ID {reminder_id} 已成功删除",
    "none": "没有任何提醒",
    "notified": "提醒ID {reminder_id} 已标记为已通知",
    "no_keyword_match": "没有找到包含该关键词的提醒",
}


def _fail(text: str) -> dict:
    return {"status": False, "message": text}


class ReminderApi(BaseApi):
    _TEXT = {"en": _EN, "zh": _ZH}
    _ONLY_IN = {"mark_as_notified": "zh", "search_reminders": "zh"}

    def view_reminder_by_title(self, title):
        if self.logged_in == False:  # noqa: E712 -- upstream compares with ==
            return _fail(self._say("view_not_logged_in"))
        for reminder in self.reminder_list.values():
            if reminder["title"] == title:
                return {"status": True, "reminder": reminder}
        return _fail(self._say("no_title", title=title))

    def add_reminder(self, title, description, time):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._say("add_not_logged_in"))
        if len(self.reminder_list) >= self.max_capacity:
            return _fail(self._say("full"))
        self.reminder_id_counter += 1
        rid = self.reminder_id_counter
        self.reminder_list[rid] = {"reminder_id": rid, "title": title, "description": description, "time": time,
                                   "notified": False}
        return {"status": True, "message": self._say("added", title=title)}

    def delete_reminder(self, reminder_id):
        if self.logged_in == False:  # noqa: E712
            return _fail(self._say("delete_not_logged_in"))
        if reminder_id not in self.reminder_list:
            return _fail(self._say("no_id"))
        del self.reminder_list[reminder_id]
        return {"status": True, "message": self._say("deleted", reminder_id=reminder_id)}

    def view_all_reminders(self):
        if not self.reminder_list:
            return _fail(self._say("none"))
        shown = [{"title": r["title"], "description": r["description"], "time": r["time"], "notified": r["notified"]}
                 for r in self.reminder_list.values()]
        return {"status": True, "reminders": shown}

    def mark_as_notified(self, reminder_id):
        if reminder_id not in self.reminder_list:
            return _fail(self._say("no_id"))
        self.reminder_list[reminder_id]["notified"] = True
        return {"status": True, "message": self._say("notified", reminder_id=reminder_id)}

    def search_reminders(self, keyword):
        found = []
        for r in self.reminder_list.values():
            if keyword.lower() in r["title"].lower() or keyword.lower() in r["description"].lower():
                # upstream formats the time with strftime, which fails on the str times it stores
                found.append({"title": r["title"], "description": r["description"],
                              "time": r["time"].strftime("%Y-%m-%d %H:%M")})
        if not found:
            return _fail(self._say("no_keyword_match"))
        return {"status": True, "reminders": found}
