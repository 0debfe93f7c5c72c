"""What `prose check` loads before it reads a file: a short program is checked in well under a
second only if the commands it does not run (the VM behind `run`, `runs` and `state`) stay
unloaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from openprose.cli import build_parser, main
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


def test_a_check_that_ends_its_process_reports_everything_first(tmp_path: Path) -> None:
    # `prose check` ends its process at once after the report (the last file's tree and
    # model are not taken apart): everything written must have been flushed by then, in
    # every format, with the exit status of the diagnostics; in-process, main returns.
    for k in range(3):
        body = 'session "fine"\n' * 200 + ("session: nobody\n" if k == 2 else "")
        (tmp_path / f"p{k}.prose").write_text(body, encoding="utf-8")
    files = [str(tmp_path / f"p{k}.prose") for k in range(3)]
    command = [sys.executable, "-m", "openprose", "check"]
    done = subprocess.run([*command, "--format", "json", *files], capture_output=True, text=True)
    assert done.returncode == 1
    assert [d["code"] for d in json.loads(done.stdout)] == ["E007"]
    assert done.stderr.strip() == "Found 1 error in 1 file (3 checked)."
    human = subprocess.run([*command, *files], capture_output=True, text=True)
    assert human.returncode == 1
    assert "agent `nobody` is not defined" in human.stdout
    assert human.stdout.endswith("\n")
    clean = subprocess.run([*command, files[0]], capture_output=True, text=True)
    assert (clean.returncode, clean.stdout) == (0, "")
    assert main(["check", "--format", "json", files[0]]) == 0  # returns, does not exit
