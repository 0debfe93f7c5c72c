"""Folding old segments into ``memory.md`` without a model, keeping their specifics.

primitives/session.md: "compaction is not summarization"; what must survive is locations,
exact findings, decisions, numbers, names and open questions.  Without a model we cannot
rewrite prose, so we keep or drop whole sentences: a sentence stays when it holds a
specific (a digit, a path or a file name, a URL, quoted text, an identifier, a capitalised
name inside the sentence, a decision or an open question); a sentence with none ("Looked
at the code and found some issues.") is dropped.  Every segment keeps its heading (number,
time, prompt), and its first sentence when nothing else stays, so the history has no gap.
A sentence already kept for an earlier segment is not repeated.

The history is a list, one ``- Segment NNN ...`` line per segment and one ``  - ...``
line per kept sentence: no line of it can read as a markdown heading, which is how
``memory.split_memory`` tells it from the agent's own text.
"""

from __future__ import annotations

import re

from openprose.vm.memory_store import Segment

# Identifiers and names depend on case; the rest does not.
_CASED = re.compile(
    r"\b[a-z]+[A-Z]\w*|\b[A-Z][a-z0-9]+[A-Z]\w*|\b[A-Z]{2,}\b|(?<=[^.!?:\s])\s+[A-Z][a-z]+"
)
_UNCASED = re.compile(
    r"""
      \d
    | ["`\u201c\u201d]
    | '[^'\s][^']*'
    | [a-z][a-z0-9+.-]*://
    | \S/\S | ^/ | \s/\S
    | \b\w[\w-]*\.[A-Za-z]\w{0,5}\b
    | \b[a-z]+_\w+
    | \w\(\)
    | \b(?:decid\w*|decision|approv\w*|reject\w*|chose|chosen|choose|select\w*|agreed
        |accept\w*|must|require[sd]?|block\w*|todo|next|because|instead|verify
        |unresolved|open\ question)\b
    | \?
    """,
    re.VERBOSE | re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[`A-Z0-9])")
_BULLET = re.compile(r"^(?:[-*+]\s+|#+\s*)")
# "- 001 ...": how `prose state compact` first wrote an entry.
_ENTRY = re.compile(r"^- (?:Segment )?(\d{3,})\b")


def is_specific(sentence: str) -> bool:
    return bool(_UNCASED.search(sentence) or _CASED.search(sentence))


def sentences(text: str) -> list[str]:
    """The sentences of a summary, one line each (list markers and heading marks off)."""
    found: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line.strip()).strip()
        if line:
            found.extend(part.strip() for part in _SENTENCE_END.split(line) if part.strip())
    return found


def specifics(text: str) -> list[str]:
    """The sentences of ``text`` worth keeping; its first one when none is."""
    every = sentences(text)
    kept = [sentence for sentence in every if is_specific(sentence)]
    return kept or every[:1]


def folded_numbers(history: str) -> set[int]:
    return {int(m.group(1)) for line in history.splitlines() if (m := _ENTRY.match(line))}


def fold(segments: list[Segment], history: str) -> str:
    """``history`` (the lines of a "Compacted history" section) with an entry for each
    segment it does not have yet, in order."""
    lines = history.splitlines() if history else []
    done = folded_numbers(history)
    seen = {line[4:] for line in lines if line.startswith("  - ")}
    for segment in segments:
        if segment.number in done:
            continue  # folded by a compaction that died before it removed the segment
        head = f"- Segment {segment.number:03d}"
        if segment.timestamp:
            head += f" ({segment.timestamp})"
        if segment.prompt:
            head += f", prompt: {segment.prompt!r}"
        lines.append(head)
        for sentence in specifics(segment.summary):
            if sentence not in seen:
                seen.add(sentence)
                lines.append(f"  - {sentence}")
    return "\n".join(lines)


def estimate_tokens(text: str) -> int:
    """Four characters a token, rounded up: the usual estimate for English text, and the
    one ``compact --strategy tokens`` documents."""
    return (len(text) + 3) // 4
