"""Quick fixes for a suppression comment that has no effect (W036): change a code to one
reported on its line (or to a code one keystroke away), or remove the code or the whole
directive.
"""

from __future__ import annotations

from openprose.codes import CODES, SYNTAX_CODES
from openprose.diagnostics import Diagnostic
from openprose.format import TextEdit
from openprose.ide.fixes.did_you_mean import MAX_SUGGESTIONS
from openprose.ide.fixes.fixer import Fix, Fixer, quickfix

__all__ = ["useless_suppression"]


_SUPPRESSIBLE = sorted(set(CODES) - SYNTAX_CODES)


def useless_suppression(fixer: Fixer, diagnostic: Diagnostic) -> list[Fix]:
    """For a code that does nothing: change it to a code reported on that line, or remove
    it; for a directive that does nothing: remove the directive."""
    from openprose.suppressions import DIRECTIVE, find_suppressions, listed_codes

    if diagnostic not in find_suppressions(fixer.module).problems:
        return []  # the client's diagnostic is from an older text
    line, start = diagnostic.start
    end = diagnostic.end[1]
    text = fixer.analysis.lines[line - 1]
    row = line - 1
    last = line == len(fixer.analysis.lines)
    match = next(
        (m for m in DIRECTIVE.finditer(text) if m.start() <= start and end <= m.end()), None
    )
    if match is None:
        return []
    if start == match.start():  # the whole directive has no effect
        removal = _remove_directive(text, row, start, end, last)
        return [quickfix("Remove the suppression comment", [removal], "W036")]
    codes = listed_codes(match)
    listed = [name for name, _, _ in codes]
    word = text[start:end]
    fixes: list[Fix] = []
    on_line = sorted(
        {
            d.code
            for d in fixer.analysis.diagnostics
            if d.start[0] == line and d.code != "W036" and d.code not in listed
        }
    )
    candidates = on_line or _close_codes(word, listed)
    for code in candidates:
        fixes.append(
            quickfix(
                f"Change to `{code}`",
                [TextEdit((row, start), (row, end), code)],
                "W036",
                preferred=len(candidates) == 1 and bool(on_line),
            )
        )
    index = next(i for i, (_, code_start, _) in enumerate(codes) if code_start == start)
    if len(codes) == 1:
        removal = _remove_directive(text, row, match.start(), match.end(), last)
    elif index + 1 < len(codes):  # up to the next code, taking the separator
        removal = TextEdit((row, start), (row, codes[index + 1][1]), "")
    else:  # the last one: from the end of the code before it
        removal = TextEdit((row, codes[index - 1][2]), (row, end), "")
    fixes.append(quickfix(f"Remove `{word}` from the suppression comment", [removal], "W036"))
    return fixes


def _close_codes(word: str, listed: list[str]) -> list[str]:
    """Codes one keystroke from ``word`` (a look-alike letter, or one character off)."""
    options = [c for c in _SUPPRESSIBLE if c not in listed]
    plain = word.upper().translate(str.maketrans("OLI", "011"))
    if plain in options:
        return [plain]
    return [
        c
        for c in options
        if len(c) == len(plain) and sum(a != b for a, b in zip(c, plain, strict=True)) == 1
    ][:MAX_SUGGESTIONS]


def _remove_directive(text: str, row: int, start: int, end: int, last: bool) -> TextEdit:
    """Delete a directive and the blanks before it; a line holding nothing else goes whole."""
    before = text[:start]
    if not before.strip() and not text[end:].strip():
        return (
            TextEdit((row, 0), (row + 1, 0), "")
            if not last
            else TextEdit((row, 0), (row, len(text)), "")
        )
    return TextEdit((row, len(before.rstrip())), (row, end), "")
