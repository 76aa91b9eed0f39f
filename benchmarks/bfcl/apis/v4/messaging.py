"""MessageAPI, TwitterAPI and TicketAPI, v4: only result shapes changed.

* ``delete_message`` names the receiver under ``receiver_id`` and says "latest" (it always deleted the latest).
* ``comment`` without login returns an error dict (v3 raised a dict, a TypeError); ``list_all_following``
  wraps the list in ``{"following_list": ...}``.
* ``ticket_get_login_status`` answers under ``login_status``.
"""
from __future__ import annotations

from ..message_api import MessageAPI as MessageAPIV3
from ..posting_api import TwitterAPI as TwitterAPIV3
from ..ticket_api import TicketAPI as TicketAPIV3


class MessageAPI(MessageAPIV3):
    def delete_message(self, receiver_id: str):
        result = super().delete_message(receiver_id)
        if result.get("deleted_status") is True:
            return {"deleted_status": True, "receiver_id": result["message_id"],
                    "message": f"Receiver {receiver_id}'s latest message deleted successfully."}
        return result


class TwitterAPI(TwitterAPIV3):
    def comment(self, tweet_id: int, comment_content: str):
        return self._need_login("commenting") or super().comment(tweet_id, comment_content)

    def list_all_following(self):
        if err := self._need_login("listing following"):
            return err
        return {"following_list": self.following_list}


class TicketAPI(TicketAPIV3):
    def ticket_get_login_status(self):
        return {"login_status": bool(self.current_user)}
