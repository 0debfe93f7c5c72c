"""Compacting a persistent agent's memory: which segments stay, what of the others survives
in memory.md, and the control plane's describe and reset."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from openprose.vm.memory import AgentMemories, render_memory, split_memory
from openprose.vm.memory_compact import estimate_tokens, fold, specifics
from openprose.vm.memory_store import Segment, render_segment

TS = 1_800_000_000.0

SUMMARIES = [
    "Reviewed auth module (src/auth/login.ts:45-120). I looked around for a while. "
    "Found SQL injection risk in the query builder on line 67.",
    "Coverage at 73%, target is 80%. Things seem fine overall.",
    'Decided to use JWT over session tokens because they are stateless. Alice said "ship it".',
    "See https://example.com/rfc/7519 for the token format. It was a long day.",
    "Next: verify that the rate limiter applies to the OAuth flow?",
]


def agent(tmp_path: Path, state: str = "filesystem") -> AgentMemories:
    m = AgentMemories(tmp_path / ".prose" / "runs" / "r1", tmp_path, home=tmp_path, state=state)
    for n, summary in enumerate(SUMMARIES, start=1):
        m.record("critic", "project", f"Review part {n}", summary, TS + n, key=str(n))
    return m


def test_specifics_stay_and_generic_sentences_go() -> None:
    kept = specifics(SUMMARIES[0] + " " + SUMMARIES[1])
    assert kept == [
        "Reviewed auth module (src/auth/login.ts:45-120).",
        "Found SQL injection risk in the query builder on line 67.",
        "Coverage at 73%, target is 80%.",
    ]
    assert specifics("I reviewed the code and found some issues.") == [
        "I reviewed the code and found some issues."  # nothing specific: the first sentence
    ]
    assert specifics("- Approved the plan.\n- it went well\n## Open questions") == [
        "Approved the plan."
    ]


@pytest.mark.parametrize("state", ["filesystem", "sqlite"])
def test_recent_keeps_the_last_segments_and_folds_the_rest(tmp_path: Path, state: str) -> None:
    m = agent(tmp_path, state)
    report = m.compact("critic", "project", "recent", max_messages=2)
    assert report["compacted"] == [1, 2, 3] and report["kept"] == [4, 5]
    assert report["before"]["segments"] == 5 and report["after"]["segments"] == 2
    assert report["after"]["compacted_segments"] == 3
    assert report["exists"] and report["strategy"] == "recent" and report["limit"] == 2
    understanding, history = split_memory(m.describe("critic", "project", True)["data"]["memory"])
    assert understanding == SUMMARIES[-1]
    assert history.splitlines() == [
        "- Segment 001 (2027-01-15T08:00:01Z), prompt: 'Review part 1'",
        "  - Reviewed auth module (src/auth/login.ts:45-120).",
        "  - Found SQL injection risk in the query builder on line 67.",
        "- Segment 002 (2027-01-15T08:00:02Z), prompt: 'Review part 2'",
        "  - Coverage at 73%, target is 80%.",
        "- Segment 003 (2027-01-15T08:00:03Z), prompt: 'Review part 3'",
        "  - Decided to use JWT over session tokens because they are stateless.",
        '  - Alice said "ship it".',
    ]
    # Numbers are never given again, and a replayed step is still known after compaction.
    assert not m.record("critic", "project", "Review part 1", SUMMARIES[0], TS, key="1")
    assert m.record("critic", "project", "Review part 6", "Done.", TS, key="6")
    assert m.describe("critic", "project")["metadata"]["last_segment"] == 6
    # Compacting again folds only what is new.
    again = m.compact("critic", "project", "recent", max_messages=1)
    assert again["compacted"] == [4, 5]
    history = split_memory(m.describe("critic", "project", True)["data"]["memory"])[1]
    assert [line[:15] for line in history.splitlines() if line.startswith("- ")] == [
        "- Segment 001 (",
        "- Segment 002 (",
        "- Segment 003 (",
        "- Segment 004 (",
        "- Segment 005 (",
    ]


def test_tokens_keeps_the_recent_segments_that_fit(tmp_path: Path) -> None:
    m = agent(tmp_path)
    data = m.describe("critic", "project", include_data=True)["data"]
    sizes = [estimate_tokens(render_segment(Segment(**s))) for s in data["segments"]]
    budget = sizes[-1] + sizes[-2] + sizes[-3] - 1  # not quite three
    report = m.compact("critic", "project", "tokens", max_tokens=budget)
    assert report["kept"] == [4, 5] and report["limit"] == budget
    assert m.compact("critic", "project", "tokens", max_tokens=0)["kept"] == []
    assert m.describe("critic", "project")["items"]["segments"] == 0
    assert m.describe("critic", "project")["items"]["compacted_segments"] == 5


def test_a_compaction_that_died_before_removing_segments_folds_them_once() -> None:
    segments = [Segment(1, "t", "p", "Port 8080."), Segment(2, "t", "p", "Port 9090.")]
    history = fold(segments[:1], "")
    assert fold(segments, history) == fold(segments, "")


def test_compacting_a_missing_agent_reports_it(tmp_path: Path) -> None:
    m = AgentMemories(tmp_path / "run", tmp_path, home=tmp_path)
    report = m.compact("ghost", "project", "tokens")
    assert report["exists"] is False and report["compacted"] == [] and report["limit"] == 2000
    assert (
        report["before"]
        == report["after"]
        == {
            "segments": 0,
            "compacted_segments": 0,
            "memory_chars": 0,
            "tokens": 0,
        }
    )
    assert not (tmp_path / ".prose").exists()  # nothing created by looking
    with pytest.raises(ValueError):
        m.compact("ghost", "project", "oldest")
    with pytest.raises(ValueError):
        m.compact("ghost", "project", "recent", max_messages=-1)


@pytest.mark.parametrize("state", ["filesystem", "sqlite"])
def test_describe_and_reset(tmp_path: Path, state: str) -> None:
    m = agent(tmp_path, state)
    report = m.describe("critic", "project", include_data=True)
    assert report["exists"] and report["store"] == state
    assert report["items"]["segments"] == 5
    assert report["metadata"]["first_segment"] == 1 and report["metadata"]["last_number"] == 5
    assert report["metadata"]["updated"] == "2027-01-15T08:00:05Z"
    first = report["data"]["segments"][0]
    assert first == {
        "number": 1,
        "timestamp": "2027-01-15T08:00:01Z",
        "prompt": "Review part 1",
        "summary": SUMMARIES[0],
        "run": "r1",
        "step": "1",
    }
    assert "data" not in m.describe("critic", "project")
    assert m.agents("project") == ["critic"]
    m.record("other", "project", "p", "a", TS)
    cleared = m.reset("critic", "project")
    assert cleared["cleared"] and cleared["exists"] and cleared["items"]["segments"] == 5
    assert not m.describe("critic", "project")["exists"]
    assert m.read("critic", "project") is None
    assert m.agents("project") == ["other"]  # only that agent
    assert m.reset("critic", "project")["cleared"] is False
    # After a reset numbering starts again and a replayed step is recorded anew.
    assert m.record("critic", "project", "Review part 1", "again", TS, key="1")
    assert m.describe("critic", "project")["metadata"]["last_segment"] == 1


WORDS = st.sampled_from(["the", "plan", "looked", "fine", "we", "talked", "about", "it"])
TOKENS = st.one_of(
    st.integers(0, 10_000).map(str),
    st.from_regex(r"src/[a-z]{1,8}/[a-z]{1,8}\.py", fullmatch=True),
    st.from_regex(r"https://[a-z]{1,8}\.com/[a-z0-9]{0,8}", fullmatch=True),
    st.from_regex(r'"[a-z ]{1,12}"', fullmatch=True),
    st.from_regex(r"[a-z]{1,6}_[a-z]{1,6}", fullmatch=True),
)
SENTENCE = st.lists(st.one_of(WORDS, TOKENS), min_size=1, max_size=8).map(
    lambda words: " ".join(words).capitalize() + "."
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(SENTENCE, min_size=1, max_size=5), min_size=1, max_size=5))
def test_every_specific_of_a_folded_segment_survives(summaries: list[list[str]]) -> None:
    segments = [
        Segment(n, "t", f"prompt {n}", " ".join(sentences))
        for n, sentences in enumerate(summaries, start=1)
    ]
    history = fold(segments, "")
    for segment in segments:
        assert f"- Segment {segment.number:03d}" in history
        for token in segment.summary.replace(".", " ").split():
            if any(c.isdigit() or c in '/_"' for c in token):
                assert token in history
    # The history is list lines only: nothing in it can pass for a heading of memory.md.
    assert all(line.startswith(("- ", "  - ")) for line in history.splitlines())


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=200),
    st.lists(SENTENCE, max_size=4),
)
def test_memory_md_round_trips_its_understanding_and_history(
    answer: str, sentences: list[str]
) -> None:
    assume("## compacted history" not in answer.lower() and "\r" not in answer)
    history = fold([Segment(1, "t", "p", " ".join(sentences))], "") if sentences else ""
    assert split_memory(render_memory("a", answer, history)) == (answer.rstrip("\n"), history)
