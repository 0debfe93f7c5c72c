"""Deterministic generators of benchmark inputs.

``flat_program`` and ``block_program`` build synthetic but realistic OpenProse programs that mix
every construct of the language; ``python_file`` concatenates real standard-library modules so
that parso has a Python file of comparable size to parse.

Run ``python bench/generate.py`` for a small self-check of the generators.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import random
from collections.abc import Callable
from pathlib import Path

DEFAULT_SEED = 20260121
MODELS = ("sonnet", "opus", "haiku")
BACKOFFS = ("none", "linear", "exponential")
PERMISSIONS = ("allow", "deny", "prompt")
SUBJECTS = ("security", "performance", "style", "docs", "tests", "api", "storage", "billing")

# Big pure-Python stdlib modules, in the order they are concatenated by ``python_file``.
PYTHON_MODULES = (
    "typing",
    "argparse",
    "inspect",
    "_pydecimal",
    "subprocess",
    "tarfile",
    "pydoc",
    "difflib",
    "email._header_value_parser",
    "dataclasses",
    "enum",
    "zipfile",
    "logging",
    "collections",
    "pathlib",
    "shutil",
    "ast",
)


class ProgramBuilder:
    """Emits OpenProse statements unit by unit; every bound name carries a unique suffix."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.k = 0
        self.agents: list[str] = ["researcher", "writer"]
        self.programs: list[str] = ["research"]
        self.topics: list[str] = ["topic"]
        self.values: list[str] = ["topic"]

    # -- helpers -------------------------------------------------------------------------------

    def next_k(self) -> int:
        self.k += 1
        return self.k

    def agent(self) -> str:
        return self.rng.choice(self.agents[-12:])

    def topic(self) -> str:
        return self.rng.choice(self.topics[-8:])

    def value(self) -> str:
        return self.rng.choice(self.values[-20:])

    def subject(self) -> str:
        return self.rng.choice(SUBJECTS)

    def bind(self, name: str) -> str:
        self.values.append(name)
        return name

    # -- preamble --------------------------------------------------------------------------------

    def preamble(self) -> list[str]:
        return [
            "# Synthetic OpenProse benchmark program (generated, deterministic)",
            "# Mixes every construct of the language; names are unique (flat namespace).",
            "",
            'use "@openprose/research" as research',
            'input topic: "The subject to investigate, e.g. \\"agent orchestration\\""',
            "",
            "agent researcher:",
            "  model: sonnet",
            '  prompt: "You are a careful research assistant"',
            "",
            "agent writer:",
            "  model: opus",
            '  prompt: "You are a technical writer.\\nWrite clearly."',
            "",
        ]

    # -- units -----------------------------------------------------------------------------------

    def unit_agent(self) -> list[str]:
        k = self.next_k()
        name = f"reviewer_{k}"
        persist = self.rng.choice(("true", "project", f'".prose/agents/{name}/"'))
        lines = [
            f"# Reviewer agent {k} for the {self.subject()} area",
            f"agent {name}:",
            f"  model: {self.rng.choice(MODELS)}",
            f'  prompt: "You review area {k} and report \\"issues\\" clearly.\\n\\tBe concise."',
            f"  persist: {persist}",
            '  skills: ["web-search", "summarizer"]',
            "  permissions:",
            '    read: ["*.md", "src/**/*.py"]',
            f'    write: ["output/{k}/"]',
            f"    bash: {self.rng.choice(PERMISSIONS)}",
            f"    network: {self.rng.choice(PERMISSIONS)}",
        ]
        self.agents.append(name)
        return lines

    def unit_agent_multiline(self) -> list[str]:
        k = self.next_k()
        name = f"planner_{k}"
        self.agents.append(name)
        return [
            f"agent {name}:",
            f"  model: {self.rng.choice(MODELS)}",
            '  prompt: """',
            f"You are planner {k}. You break large goals into small steps.",
            'Prefer "boring" solutions and explain each trade-off.',
            '"""',
        ]

    def unit_imports(self) -> list[str]:
        k = self.next_k()
        program, topic = f"research_{k}", f"topic_{k}"
        self.programs.append(program)
        self.topics.append(topic)
        self.bind(topic)
        return [
            f'use "@acme/research-{k}" as {program}',
            f'input {topic}: "Topic {k} to investigate (\\"{self.subject()}\\" focus)"',
        ]

    def unit_sessions(self) -> list[str]:
        k = self.next_k()
        topic, agent, prev = self.topic(), self.agent(), self.value()
        notes, style = self.bind(f"notes_{k}"), self.bind(f"style_{k}")
        summary = self.bind(f"summary_{k}")
        return [
            f'session "Collect notes about {{{topic}}} for round {k}"',
            f"let {notes} = session: {agent}",
            f'  prompt: "Gather notes on {{{topic}}}\\tand cite sources"',
            f"  context: {prev}",
            f"  retry: {self.rng.randint(1, 5)}",
            f"  backoff: {self.rng.choice(BACKOFFS)}",
            f'const {style} = session "Choose a tone for section {k}"',
            f"session draft_{k}: {agent}",
            f"  model: {self.rng.choice(MODELS)}  # override the agent's model",
            f"  context: [{notes}, {style}]",
            f"output {summary} = session: {self.agent()}",
            f"  context: {{ {notes}, {style} }}",
        ]

    def unit_resume(self) -> list[str]:
        k = self.next_k()
        return [
            f"resume: {self.agent()}",
            f'  prompt: "Continue where round {k} stopped"',
            f"  context: {self.value()}",
        ]

    def unit_parallel(self) -> list[str]:
        k = self.next_k()
        sec, perf, style = f"sec_{k}", f"perf_{k}", f"style_check_{k}"
        target, agent = self.value(), self.agent()
        merged = self.bind(f"merged_{k}")
        return [
            f"# Fan out the reviews of round {k}",
            "parallel:",
            f'  {sec} = session "Check the security of {{{target}}}"',
            f"  {perf} = session: {agent}",
            '    prompt: "Check performance hot spots"',
            f'  {style} = session "Check style"',
            'parallel ("any", count: 2, on-fail: "continue"):',
            f'  session "Attempt A for {k}"',
            f'  session "Attempt B for {k}"',
            f'  session "Attempt C for {k}"',
            f'let {merged} = session "Merge the reviews"',
            f"  context: {{ {sec}, {perf}, {style} }}",
        ]

    def unit_loops(self) -> list[str]:
        k = self.next_k()
        items = self.bind(f"items_{k}")
        i, item, idx, part, n = f"i_{k}", f"item_{k}", f"idx_{k}", f"part_{k}", f"n_{k}"
        return [
            f"repeat {self.rng.randint(2, 6)} as {i}:",
            f'  session "Warm-up iteration {{{i}}} of round {k}"',
            f'let {items} = ["alpha {k}", "beta {k}", "gamma {k}"]',
            f"for {item}, {idx} in {items}:",
            f'  session "Process item number {{{idx}}}"',
            f"    context: {item}",
            f"parallel for {part} in {items}:",
            f'  session "Research {{{part}}} in depth"',
            f"loop until **the draft of round {k} is polished** (max: 5) as {n}:",
            f'  session "Improve the draft (pass {{{n}}})"',
            f"    context: {self.value()}",
        ]

    def unit_pipeline(self) -> list[str]:
        k = self.next_k()
        topics, kept = self.bind(f"topics_{k}"), self.bind(f"kept_{k}")
        pitches, quick = self.bind(f"pitches_{k}"), self.bind(f"quick_{k}")
        acc, pitch = f"acc_{k}", f"pitch_{k}"
        return [
            f'let {topics} = ["quantum", "blockchain", "machine learning", "iot {k}"]',
            f"let {kept} = {topics} | filter:",
            '  session "Is this topic relevant? Answer yes or no."',
            "    context: item",
            f"let {pitches} = {topics}",
            "  | filter:",
            '      session "Is this topic trending?"',
            "        context: item",
            "  | map:",
            '      session "Write a one-line pitch"',
            "        context: item",
            f"  | reduce({acc}, {pitch}):",
            '      session "Merge the pitches"',
            f"        context: [{acc}, {pitch}]",
            f"let {quick} = {kept} | pmap:",
            '  session "Summarize quickly"',
            "    context: item",
        ]

    def unit_try(self) -> list[str]:
        k = self.next_k()
        err = f"err_{k}"
        throw = f'throw "Deployment {k} failed: see {{{err}}}"' if k % 3 else "throw"
        return [
            "try:",
            f'  session "Deploy build {k}"',
            f"    retry: {self.rng.randint(1, 4)}",
            f"    backoff: {self.rng.choice(BACKOFFS)}",
            f"catch as {err}:",
            '  session "Diagnose the failure"',
            f"    context: {err}",
            f"  {throw}",
            "finally:",
            '  session "Clean up temporary files"',
        ]

    def unit_conditionals(self) -> list[str]:
        k = self.next_k()
        return [
            f"choice **the severity of issue {k}**:",
            '  option "Quick fix":',
            '    session "Apply a quick fix"',
            '  option "Full rewrite":',
            '    session "Rewrite the module"',
            f"      model: {self.rng.choice(MODELS)}",
            f"if **the tests fail after round {k}**:",
            '  session "Fix the failing tests"',
            "elif **lint reports problems**:",
            '  session "Fix the lint problems"',
            "else:",
            f'  session "Ship round {k}"',
        ]

    def unit_blocks(self) -> list[str]:
        k = self.next_k()
        name, subject, depth = f"review_{k}", f"subject_{k}", f"depth_{k}"
        bundle = self.bind(f"bundle_{k}")
        return [
            f"block {name}({subject}, {depth}):",
            f'  session "Review {{{subject}}} at depth {{{depth}}}"',
            '  session "Summarize the review"',
            f"do {name}({self.topic()}, {self.value()})",
            f"let {bundle} = do:",
            f'  session "Step one of bundle {k}"',
            f'  session "Step two of bundle {k}"',
        ]

    def unit_composition(self) -> list[str]:
        k = self.next_k()
        program, topic = self.rng.choice(self.programs[-6:]), self.topic()
        res, facts = self.bind(f"res_{k}"), self.bind(f"facts_{k}")
        findings, sources = self.bind(f"findings_{k}"), self.bind(f"sources_{k}")
        return [
            f'session "Outline part {k}" -> session "Draft part {k}" -> session "Polish it"',
            f'let {res} = {program}(topic: {topic}, depth: "deep")',
            f"let {{ {findings}, {sources} }} = {program}(topic: {topic})",
            f"let {facts} = {res}.findings",
            f'session "Write the report on {{{topic}}}"',
            f"  context: [{res}.findings, {sources}]",
        ]

    def unit_multiline_session(self) -> list[str]:
        k = self.next_k()
        essay = self.bind(f"essay_{k}")
        return [
            f'let {essay} = session """',
            f"  Write essay {k} about {{{self.topic()}}}.",
            '  Use the "inverted pyramid" style.',
            '  """',
        ]

    def units(self) -> list[Callable[[], list[str]]]:
        return [
            self.unit_agent,
            self.unit_imports,
            self.unit_sessions,
            self.unit_parallel,
            self.unit_loops,
            self.unit_pipeline,
            self.unit_try,
            self.unit_conditionals,
            self.unit_blocks,
            self.unit_composition,
            self.unit_resume,
            self.unit_agent_multiline,
            self.unit_multiline_session,
        ]

    def filler(self) -> str:
        k = self.next_k()
        if k % 2:
            return f"# Note {k}: filler line to reach the requested size"
        return f'session "Filler task {k}"'

    def body(self, lines: int) -> list[str]:
        """Exactly ``lines`` lines: whole units separated by blank lines, in a seeded order."""
        out = self.preamble()
        while True:
            units = self.units()
            self.rng.shuffle(units)
            for unit in units:
                chunk = [*unit(), ""]
                if len(out) + len(chunk) > lines:
                    out.extend(self.filler() for _ in range(lines - len(out)))
                    return out[:lines]
                out.extend(chunk)


def _join(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def flat_program(lines: int = 10_000, seed: int = DEFAULT_SEED) -> str:
    """A top-level program of about ``lines`` lines mixing every construct."""
    return _join(ProgramBuilder(seed).body(lines))


def block_program(lines: int = 10_000, seed: int = DEFAULT_SEED) -> str:
    """The same kind of content, all indented under one ``block main:``, then ``do main``."""
    body = ProgramBuilder(seed).body(lines - 3)
    indented = ["  " + line if line else "" for line in body]
    return _join(["block main:", *indented, "", "do main"])


def _module_source(name: str) -> str:
    module = importlib.import_module(name)
    path = inspect.getsourcefile(module)
    if path is None:
        return ""
    return Path(path).read_text(encoding="utf-8")


def _cut_at_top_level(lines: list[str], target: int) -> list[str]:
    """Cut before the first top-level ``def``/``class`` at or after ``target`` lines."""
    for index in range(target, len(lines)):
        if lines[index].startswith(("def ", "class ", "@")) and not lines[index - 1].strip():
            return lines[:index]
    return lines


def python_file(lines: int = 10_000) -> str:
    """Real stdlib code (concatenated modules) of about ``lines`` lines."""
    out: list[str] = []
    names = python_module_names(lines)
    for name in names:
        out.extend(_module_source(name).splitlines())
    return _join(_cut_at_top_level(out, lines))


def python_module_names(lines: int) -> list[str]:
    """Names of the stdlib modules ``python_file(lines)`` concatenates."""
    names: list[str] = []
    total = 0
    while total < lines:
        for name in PYTHON_MODULES:
            names.append(name)
            total += len(_module_source(name).splitlines())
            if total >= lines:
                break
    return names


def line_count(text: str) -> int:
    return len(text.splitlines())


def _self_check() -> None:
    flat, block, python = flat_program(), block_program(), python_file(10_000)
    assert flat == flat_program(), "flat_program is not deterministic"
    assert block == block_program(), "block_program is not deterministic"
    assert block.startswith("block main:\n") and block.endswith("\ndo main\n")
    for needle in ("parallel (", "loop until", "| reduce(", "catch as", "elif **", "let {", '"""'):
        assert needle in flat, needle
    ast.parse(python)  # the concatenation is still valid Python syntax
    multiline = sum(1 for line in flat.splitlines() if '"""' in line)
    print(f"flat program:   {line_count(flat):>6} lines, {len(flat):>8} chars")
    print(f"block program:  {line_count(block):>6} lines, {len(block):>8} chars")
    print(
        f"python file:    {line_count(python):>6} lines ({', '.join(python_module_names(10_000))})"
    )
    print(f"lines with triple quotes in the flat program: {multiline}")
    print("generators OK")


if __name__ == "__main__":
    import argparse

    # --quick for the same command line as the other scripts (.ci/run): already under a second.
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the same run: it is quick already")
    parser.parse_args()
    _self_check()
