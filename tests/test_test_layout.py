"""The test suite's own layout: every test module can be collected in one run.

Test folders are not packages, so pytest imports each module by its file name: two test modules
with one name in different folders stop the whole run at collection ("import file mismatch").
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_every_test_module_has_a_name_of_its_own() -> None:
    places: defaultdict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        if "node_modules" not in path.parts:
            places[path.name].append(str(path.relative_to(TESTS)))
    assert places, "no test modules found"
    shared = {name: sorted(where) for name, where in places.items() if len(where) > 1}
    assert shared == {}
