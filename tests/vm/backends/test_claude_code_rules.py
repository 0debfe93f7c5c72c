"""A permissions block as Claude Code tools and rules, and the callback's decisions."""

from __future__ import annotations

import json

from openprose.vm.backends.claude_code_rules import rules_for, spell


def test_no_block_reads_the_project_and_nothing_else() -> None:
    rules = rules_for(None)
    assert rules.tools == ("Read", "Glob", "Grep")
    assert rules.allow == ("Read", "Glob", "Grep")
    assert rules.decide("Write", {"file_path": "a.md"}, "/p")[0] == "deny"
    assert rules.decide("Bash", {"command": "ls"}, "/p")[0] == "deny"


def test_write_patterns_are_edit_rules_relative_to_the_project() -> None:
    rules = rules_for(json.dumps({"write": ["output/", "docs/*.md", "*.txt"], "bash": "deny"}))
    assert "Write" in rules.tools and "Bash" not in rules.tools
    assert [r for r in rules.allow if r.startswith("Edit(")] == [
        "Edit(./output/**)",
        "Edit(./docs/*.md)",
        "Edit(*.txt)",
    ]
    assert not any(r.startswith("Write(") for r in rules.allow)  # Write(...) rules match nothing
    assert rules.decide("Write", {"file_path": "/p/output/x/y.md"}, "/p")[0] == "allow"
    assert rules.decide("Write", {"file_path": "/p/deep/a.txt"}, "/p")[0] == "allow"
    assert rules.decide("Edit", {"file_path": "/p/docs/a.md"}, "/p")[0] == "allow"
    assert rules.decide("Write", {"file_path": "/p/secret.md"}, "/p")[0] == "deny"
    assert rules.decide("Write", {"file_path": "/elsewhere/output/a"}, "/p")[0] == "deny"
    assert rules.decide("Write", {"file_path": "../output/a"}, "/p")[0] == "deny"


def test_access_words_and_prompt() -> None:
    rules = rules_for(json.dumps({"bash": "prompt", "network": "allow", "read": "deny"}))
    assert "Read" not in rules.tools
    assert "Bash" in rules.tools and "Bash" not in rules.allow  # dontAsk denies it
    assert ("WebFetch" in rules.allow) and ("WebSearch" in rules.allow)
    assert rules.decide("Bash", {"command": "ls"}, "/p")[0] == "prompt"
    assert rules.decide("Read", {"file_path": "/p/a"}, "/p")[0] == "deny"


def test_execute_patterns_narrow_the_shell_to_programs() -> None:
    rules = rules_for(json.dumps({"execute": ["scripts/*.sh"]}))
    assert "Bash" in rules.tools
    assert [r for r in rules.allow if r.startswith("Bash(")] == [
        "Bash(scripts/*.sh)",
        "Bash(scripts/*.sh *)",
        "Bash(./scripts/*.sh)",
        "Bash(./scripts/*.sh *)",
    ]
    assert rules.decide("Bash", {"command": "./scripts/build.sh --fast"}, "/p")[0] == "allow"
    assert rules.decide("Bash", {"command": "rm -rf /"}, "/p")[0] == "deny"


def test_unknown_kinds_values_and_bad_json_grant_nothing() -> None:
    assert (
        rules_for(json.dumps({"admin": "allow", "write": "maybe"})).tools == rules_for(None).tools
    )
    assert rules_for("not json").tools == rules_for(None).tools
    assert rules_for(json.dumps(["write"])).tools == rules_for(None).tools
    assert rules_for(None).decide("Task", {}, "/p")[0] == "deny"


def test_spelling() -> None:
    assert spell("out/") == "./out/**"
    assert spell("/abs/x") == "//abs/x"
    assert spell("./a/b") == "./a/b"
    assert spell("*.md") == "*.md"
