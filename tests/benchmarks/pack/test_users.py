"""The scripted user answers a question about a fact, not a substring: keyword stuffing is not asking."""
import asyncio

from mua.benchmarks.pack.users import ScenarioUser, asked, questions
from mua.harness.types import Message

REPLIES = [{"when": ["name"], "say": "Vera."}, {"when": ["sit"], "say": "A bar table."},
           {"when": ["time"], "say": "At 8 pm."}, {"when": ["branch", "which pharmacy"], "say": "North."}]


def test_only_grammatical_requests_are_questions():
    assert questions("Hello. What is your name? Thanks!") == [["what", "is", "your", "name"]]
    assert questions("name sit time?") == []  # no question word: a list of keywords
    assert questions("Is name? Is sit? What name? Where sit? What time? What is name?") == []  # bare keywords
    assert questions("At what time?") == [["at", "what", "time"]]  # a prepositional question-word fragment
    assert questions("Is your name Vera?") and questions("Could you tell me the time?")  # auxiliary + subject
    assert questions("Which day would you like instead?") and questions("What time works for you?")
    assert questions("Have a nice time.") == []  # not a question
    assert questions("Could you tell me the time") == []  # no question mark


def test_whole_words_one_fact_per_question():
    assert asked("What is your name? Where would you like to sit? At what time?", REPLIES) == [0, 1, 2]
    assert asked("When did you visit us?", REPLIES) == []  # "sit" is not a word of "visit"
    assert asked("What is the timeline?", REPLIES) == []  # nor "time" of "timeline"
    assert asked("What name sit time?", REPLIES) == []
    assert asked("What is your name sit time?", REPLIES) == []  # side by side, nothing joins them: a keyword list
    assert asked("Which pharmacy should I use?", REPLIES) == [3]  # a phrase, as whole words
    assert asked("Which one is your pharmacy?", REPLIES) == []  # the phrase's words, not in that order
    assert asked("What is your name? And your name again, what is it?", REPLIES) == [0]


def test_a_compound_question_joined_by_and_or_commas_gets_each_named_fact():
    assert asked("Could you tell me your name and what time you want?", REPLIES) == [0, 2]
    assert asked("What is your name, where would you like to sit, and at what time?", REPLIES) == [0, 1, 2]
    assert asked("Would you tell me your name or the time?", REPLIES) == [0, 2]
    assert asked("What is your name and sit time?", REPLIES) == []  # one pair joined, one side by side: none


def test_the_issue_38_messages():
    """Keyword stuffing in question form gets nothing; the natural compound question gets both facts."""
    assert asked("Is name? Is sit? Is time?", REPLIES) == []
    assert asked("What name? What time? Where sit?", REPLIES) == []
    assert asked("Could you tell me your name and what time you want?", REPLIES) == [0, 2]


def test_the_user_answers_each_fact_once_then_stops():
    user = ScenarioUser({"instructions": {"reason_for_call": "A table, please."}, "replies": REPLIES})

    def turn(text):
        messages = [Message(role="user", content="A table, please."), Message(role="assistant", content=text)]
        return asyncio.run(user.respond(messages, [])).content

    assert turn("What is your name? Where do you want to sit?") == "Vera. A bar table."
    assert turn("What is your name?") == "###STOP###"  # already given: nothing new
    assert turn("At what time?") == "At 8 pm."
