"""`cafleet message search` end to end on both stores: ranking, snippets, filters, the text-only
default, --raw and its one-line error, --json, and a database from before search (revision
0010) whose messages are found once it is migrated."""

from __future__ import annotations

import pytest
from tests.support.cli_messages import Messages

pytestmark = pytest.mark.both_stores


@pytest.fixture
def msg(cli, fleet):
    return Messages(cli, fleet)


def search(msg, agent, *words_and_options):
    return msg.json("search", agent, *words_and_options)


def test_search_ranks_more_matches_first_and_marks_them_in_the_snippet(msg, fleet):
    once = msg.send(fleet.director, fleet.admin, "the nightly build failed on arm64 again")
    twice = msg.send(fleet.admin, fleet.director, "build build: retrying")
    msg.send(fleet.director, fleet.admin, "unrelated")

    out = msg.ok("search", fleet.director, "BUILD")
    hits = search(msg, fleet.director, "build")

    assert out.splitlines()[0] == "2 hits:"
    assert [h["id"] for h in hits] == [twice, once]
    assert hits[0]["score"] > hits[1]["score"]
    assert "«build»" in hits[1]["snippet"]
    assert {"from", "to", "in_reply_to", "thread_id", "score", "snippet"} <= set(hits[0])
    assert f"[{twice} | {fleet.admin} -> {fleet.director} |" in out


def test_filters_by_sender_recipient_time_and_limit(msg, fleet):
    first = msg.send(fleet.director, fleet.admin, "ticket 1")
    second = msg.send(fleet.admin, fleet.director, "ticket 2")

    def found(*options):
        return [h["id"] for h in search(msg, fleet.director, "ticket", *options)]

    assert found("--from", fleet.admin) == [second]
    assert found("--to", fleet.admin) == [first]
    assert found("--since", "1h") == found()
    assert sorted(found()) == [first, second]
    assert found("--since", "2999-01-01T00:00:00+00:00") == []
    assert len(found("--limit", "1")) == 1


def test_quotes_operators_and_star_are_text_unless_raw(msg, fleet):
    odd = msg.send(fleet.director, fleet.admin, 'ship "v2" NOT before review (fix*)')
    msg.send(fleet.director, fleet.admin, "fixes landed")

    for query in ['"v2"', "NOT before", "(fix*)", 'review" NOT', "ship:v2"]:
        assert [h["id"] for h in search(msg, fleet.director, query)] == [odd], query
    assert search(msg, fleet.director, "fix*") == search(msg, fleet.director, "fix")


def test_a_bad_raw_query_is_one_line_and_stores_nothing(msg, fleet, migrated):
    msg.send(fleet.director, fleet.admin, "alpha")
    before = migrated.count("tasks")

    err = msg.fails("search", fleet.director, 'alpha AND ("', "--raw")

    assert len(err.strip().splitlines()) == 1
    assert "not valid" in err and "drop --raw" in err
    assert migrated.count("tasks") == before


@pytest.mark.parametrize(
    "options, problem",
    [
        ((), "Missing argument"),
        (("x", "--since", "soon"), "since 'soon' is neither"),
        (("x", "--limit", "0"), "--limit"),
    ],
)
def test_bad_options_are_usage_errors(msg, fleet, options, problem):
    result = msg.run("search", fleet.director, *options)
    assert result.code == 2 and result.stdout == ""
    assert problem in result.stderr and "Traceback" not in result.stderr


def test_an_empty_result_is_said(msg, fleet):
    msg.send(fleet.director, fleet.admin, "alpha")
    assert msg.ok("search", fleet.director, "omega") == "0 hits.\n"
    assert search(msg, fleet.director, "omega") == []
