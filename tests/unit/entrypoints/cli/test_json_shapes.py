"""The shape comparison the upstream-compatibility test relies on (tests/support/json_shapes)."""

from __future__ import annotations

from support.json_shapes import shape_mismatches, upstream_fixtures


def fixture(name):
    return next(f for f in upstream_fixtures() if f["name"] == name)


def test_the_fixtures_cover_the_message_verbs_in_one_scenario():
    fixtures = upstream_fixtures()
    names = {f["name"] for f in fixtures}
    assert {"message_ack", "message_show", "message_cancel", "member_list_activity"} <= names
    assert [f["step"] for f in fixtures] == list(range(1, len(fixtures) + 1))


def test_a_flat_ack_lacks_upstreams_task_wrapper():
    flat = {"id": 2, "from": 3, "ts": "2026-01-01T00:00:00+00:00", "text": "hi", "state": "x"}
    problems = shape_mismatches(fixture("message_ack")["output"], flat)
    assert len(problems) == 1
    assert problems[0].startswith("$: no key 'task'")


def test_idle_as_text_is_another_type():
    upstream = fixture("member_list_activity")["output"]
    ours = [dict(item, idle="13s", extra=True) for item in upstream]
    problems = shape_mismatches(upstream, ours)
    assert problems == [
        f"$[{i}].idle: upstream has integer, ours string ('13s')" for i in range(len(upstream))
    ]


def test_extra_keys_and_nulls_fit():
    upstream = {"a": {"b": 1, "c": None}, "d": [{"e": "x"}]}
    ours = {"a": {"b": 2, "c": "now", "z": 0}, "d": [{"e": "y", "f": 1}, {"e": None}], "g": 1}
    assert shape_mismatches(upstream, ours) == []


def test_nesting_types_and_empty_lists_are_checked():
    upstream = {"a": {"b": 1}, "l": [{"k": True}], "n": 1}
    assert shape_mismatches(upstream, {"a": {"c": 1}, "l": [{"k": 1}], "n": 1.5}) == [
        "$.a: no key 'b' (ours has ['c'])",
        "$.l[0].k: upstream has boolean, ours integer (1)",
        "$.n: upstream has integer, ours number (1.5)",
    ]
    assert shape_mismatches(upstream, {"a": {"b": 1}, "l": [], "n": 1}) == [
        "$.l: upstream lists 1 items, ours none"
    ]
