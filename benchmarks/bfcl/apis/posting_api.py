"""TwitterAPI (upstream posting_api.py): tweets, comments, retweets and follows for one user.

Upstream quirks kept: ``comment`` while logged out raises a TypeError (it ``raise``s a dict); ``tags`` and
``mentions`` defaults are one list shared by the calls that omit them (per instance here, not per process), so
``mention`` on one such tweet shows up on the others.
"""
from __future__ import annotations

from .base import ApiSuite, pick

_OMITTED = object()  # tells "argument left out" apart from an explicit None

_DEFAULTS = {"username": "john", "password": "john123", "authenticated": False, "tweets": {}, "comments": {},
             "retweets": {}, "following_list": ["alice", "bob"], "tweet_counter": 0}


class TwitterAPI(ApiSuite):
    def _setup(self, scenario, long_context, extensions) -> None:
        for key in _DEFAULTS:
            setattr(self, key, pick(scenario, key, _DEFAULTS[key]))
        self.tweets = {int(k): v for k, v in self.tweets.items()}
        self._shared_tags: list = []
        self._shared_mentions: list = []

    def _need_login(self, action: str):
        if not self.authenticated:
            return {"error": f"User not authenticated. Please authenticate before {action}."}
        return None

    def authenticate_twitter(self, username: str, password: str):
        if username == self.username and password == self.password:
            self.authenticated = True
            return {"authentication_status": True}
        return {"authentication_status": False}

    def posting_get_login_status(self):
        return {"login_status": bool(self.authenticated)}

    def post_tweet(self, content: str, tags: list = _OMITTED, mentions: list = _OMITTED):  # type: ignore[assignment]
        if err := self._need_login("posting"):
            return err
        tweet = {"id": self.tweet_counter, "username": self.username, "content": content,
                 "tags": self._shared_tags if tags is _OMITTED else tags,
                 "mentions": self._shared_mentions if mentions is _OMITTED else mentions}
        self.tweets[self.tweet_counter] = tweet
        self.tweet_counter += 1
        return tweet

    def retweet(self, tweet_id: int):
        if err := self._need_login("retweeting"):
            return err
        if tweet_id not in self.tweets:
            return {"error": f"Tweet with ID {tweet_id} not found."}
        mine = self.retweets.setdefault(self.username, [])
        if tweet_id in mine:
            return {"retweet_status": "Already retweeted"}
        mine.append(tweet_id)
        return {"retweet_status": "Successfully retweeted"}

    def comment(self, tweet_id: int, comment_content: str):
        if not self.authenticated:
            raise TypeError("exceptions must derive from BaseException")  # upstream raises a dict
        if tweet_id not in self.tweets:
            return {"error": f"Tweet with ID {tweet_id} not found."}
        self.comments.setdefault(tweet_id, []).append({"username": self.username, "content": comment_content})
        return {"comment_status": "Comment added successfully"}

    def mention(self, tweet_id: int, mentioned_usernames: list):
        if tweet_id not in self.tweets:
            return {"error": f"Tweet with ID {tweet_id} not found."}
        self.tweets[tweet_id]["mentions"].extend(mentioned_usernames)
        return {"mention_status": "Users mentioned successfully"}

    def follow_user(self, username_to_follow: str):
        if err := self._need_login("following"):
            return err
        if username_to_follow in self.following_list:
            return {"follow_status": False}
        self.following_list.append(username_to_follow)
        return {"follow_status": True}

    def list_all_following(self):
        if err := self._need_login("listing following"):
            return err
        return self.following_list

    def unfollow_user(self, username_to_unfollow: str):
        if err := self._need_login("unfollowing"):
            return err
        if username_to_unfollow not in self.following_list:
            return {"unfollow_status": False}
        self.following_list.remove(username_to_unfollow)
        return {"unfollow_status": True}

    def get_tweet(self, tweet_id: int):
        if tweet_id not in self.tweets:
            return {"error": f"Tweet with ID {tweet_id} not found."}
        return self.tweets[tweet_id]

    def get_user_tweets(self, username: str):
        return [t for t in self.tweets.values() if t["username"] == username]

    def search_tweets(self, keyword: str):
        kw = keyword.lower()
        return [t for t in self.tweets.values()
                if kw in t["content"].lower() or kw in [tag.lower() for tag in t["tags"]]]

    def get_tweet_comments(self, tweet_id: int):
        if tweet_id not in self.tweets:
            return {"error": f"Tweet with ID {tweet_id} not found."}
        return self.comments.get(tweet_id, [])

    def get_user_stats(self, username: str):
        return {"tweet_count": len([t for t in self.tweets.values() if t["username"] == username]),
                "following_count": len(self.following_list) if username == self.username else 0,
                "retweet_count": len(self.retweets.get(username, []))}
