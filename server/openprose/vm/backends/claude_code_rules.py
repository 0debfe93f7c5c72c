"""A session's ``permissions:`` as Claude Code tools, allow rules and a decision function.

The block arrives as JSON (``openprose.vm.permissions``).  Kinds left out take the unattended
defaults in ``DEFAULTS``: read anywhere in the project, nothing else.  ``prompt`` gives the
agent the tool without allowing it, so ``dontAsk`` denies it and a ``can_use_tool`` callback
(``permission_mode="default"``) decides.  Write rules are spelled ``Edit(...)``: the CLI
applies them to ``Write`` too, while ``Write(...)`` rules match nothing.
"""

from __future__ import annotations

import fnmatch
import json
import os
from dataclasses import dataclass

from openprose.syntax.vocabulary import PERMISSION_ACCESS

READ_TOOLS = ("Read", "Glob", "Grep")
WRITE_TOOLS = ("Edit", "Write", "NotebookEdit")
NETWORK_TOOLS = ("WebFetch", "WebSearch")
DEFAULTS: dict[str, str | tuple[str, ...]] = {
    "read": "allow",
    "write": "deny",
    "execute": "deny",
    "bash": "deny",
    "network": "deny",
}

Value = str | tuple[str, ...]  # a word (allow, deny, prompt) or glob patterns


@dataclass(frozen=True)
class Rules:
    policy: dict[str, Value]
    tools: tuple[str, ...]  # the tools the agent has at all
    allow: tuple[str, ...]  # allowed_tools: used with no question

    def decide(self, tool: str, arguments: dict[str, object], cwd: str) -> tuple[str, str]:
        """("allow" | "deny" | "prompt", reason) for one tool call, by the same rules."""
        kind = _kind(tool)
        if kind is None:
            return "deny", f"{tool} is not granted by the permissions of this session"
        value = self.policy[kind]
        if isinstance(value, str):
            return value if value in ("allow", "prompt") else "deny", f"{kind}: {value}"
        if kind == "execute":
            command = str(arguments.get("command", "")).strip()
            program = command.split()[0] if command else ""
            if any(
                fnmatch.fnmatch(program.removeprefix("./"), p.removeprefix("./")) for p in value
            ):
                return "allow", f"execute: {program} matches"
            return "deny", f"execute: {program or 'the command'} matches no pattern"
        path = str(arguments.get("file_path") or arguments.get("notebook_path") or "")
        if path and _matches(path, value, cwd):
            return "allow", f"{kind}: {path} matches"
        return "deny", f"{kind}: {path or 'the call'} matches no pattern of this session"


def _kind(tool: str) -> str | None:
    if tool in READ_TOOLS:
        return "read"
    if tool in WRITE_TOOLS:
        return "write"
    if tool == "Bash":
        return "execute"
    if tool in NETWORK_TOOLS:
        return "network"
    return None


def _matches(path: str, patterns: tuple[str, ...], cwd: str) -> bool:
    relative = os.path.relpath(os.path.join(cwd, path), cwd).replace(os.sep, "/")
    if relative == ".." or relative.startswith("../"):
        return False  # outside the project: never by a pattern
    for pattern in patterns:
        pattern = pattern.removeprefix("./")
        if pattern.endswith("/"):
            if relative.startswith(pattern):
                return True
        elif "/" in pattern:
            if fnmatch.fnmatch(relative, pattern):
                return True
        elif fnmatch.fnmatch(relative.rsplit("/", 1)[-1], pattern):
            return True  # a bare glob matches at any depth, as in .gitignore
    return False


def spell(pattern: str) -> str:
    """A pattern as a Claude Code path rule: relative to the working directory (``./``),
    a directory as everything under it; a bare glob stays bare (any depth)."""
    if pattern.endswith("/"):
        pattern += "**"
    if "/" not in pattern or pattern.startswith(("./", "//")):
        return pattern
    if pattern.startswith("/"):
        return "/" + pattern  # an absolute path is spelled //path
    return "./" + pattern


def _program_rules(pattern: str) -> list[str]:
    """The program alone or with arguments, written with or without ``./`` (the CLI matches
    a command's text, so ``./x`` and ``x`` are different commands to it)."""
    bare = pattern.removeprefix("./")
    spellings = [bare] if bare.startswith("/") else [bare, "./" + bare]
    return [rule for s in spellings for rule in (f"Bash({s})", f"Bash({s} *)")]


def rules_for(permissions: str | None) -> Rules:
    policy: dict[str, Value] = dict(DEFAULTS)
    try:
        given = json.loads(permissions) if permissions else {}
    except ValueError:
        given = {}
    for kind, value in given.items() if isinstance(given, dict) else ():
        if kind not in DEFAULTS:
            continue  # an unknown kind (the checker warned, W008) grants nothing
        if isinstance(value, list):
            policy[kind] = tuple(str(p) for p in value)
        elif value in PERMISSION_ACCESS:
            policy[kind] = value
    # `bash` is the shell as a whole; `execute` narrows it to programs by pattern.
    if policy["bash"] != "deny" and not isinstance(policy["execute"], tuple):
        policy["execute"] = policy["bash"]
    tools: list[str] = []
    allow: list[str] = []
    for kind, names in (("read", READ_TOOLS), ("write", WRITE_TOOLS), ("execute", ("Bash",))):
        value = policy[kind]
        if value == "deny":
            continue
        tools += names
        if value == "allow":
            allow += names
        elif isinstance(value, tuple):
            if kind == "read":
                allow += [f"Read({spell(p)})" for p in value]
            elif kind == "write":
                allow += [f"Edit({spell(p)})" for p in value]
            else:
                allow += [rule for p in value for rule in _program_rules(p)]
    if policy["network"] != "deny":
        tools += NETWORK_TOOLS
        if policy["network"] == "allow":
            allow += NETWORK_TOOLS
    return Rules(policy, tuple(tools), tuple(allow))
