"""What `prose check` loads before it reads a file: a short program is checked in well under a
second only if the commands it does not run (the VM behind `run`, `runs` and `state`) stay
unloaded."""

from __future__ import annotations

import subprocess
import sys

from openprose.cli import build_parser
from openprose.vm.state.base import BACKENDS


def _modules_after(statement: str) -> set[str]:
    # A fresh interpreter: this test process has imported everything already.
    script = f"import sys\n{statement}\nprint('\\n'.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout
    return set(out.split())


def test_the_command_line_does_not_load_the_vm() -> None:
    loaded = _modules_after("import openprose.cli; openprose.cli.build_parser()")
    assert not {name for name in loaded if name.startswith("openprose.vm")}


def test_checking_does_not_load_the_vm() -> None:
    loaded = _modules_after(
        "from openprose.checking import check_text; check_text('session \"x\"\\n')"
    )
    assert "openprose.checking" in loaded
    assert not {name for name in loaded if name.startswith("openprose.vm")}


def _choices(*command: str) -> list[str]:
    parser = build_parser()
    for word in command:
        actions = [a for a in parser._actions if a.choices and word in a.choices]
        parser = actions[0].choices[word]  # type: ignore[index]
    state = [a for a in parser._actions if a.dest == "state"]
    return list(state[0].choices or [])


def test_the_state_options_offer_the_vms_backends() -> None:
    assert _choices("runs", "resume") == list(BACKENDS)
    assert _choices("state", "describe") == list(BACKENDS)
