"""Random programs that check clean and run to their end on the offline backend, each made
from a seed (the same seed, the same program), for differential tests of the engines.

They mix what spreads over workers on the dbos engine (``parallel for``, ``pmap``,
``parallel:`` blocks, blocks called from items, fan-outs nested in items) with what the run
does itself (loops, conditions, choices, ``try``/``catch``, retries, long values that are
summarised).  What only timing decides is left out: races (``first``, ``any``), and failures
inside fan-outs, whose siblings a fail-fast stops wherever they are.  A session whose prompt
says ``flaky`` fails its first attempts (the offline backend's ``failures``), only outside
fan-outs, where the order of attempts is the program's."""

from __future__ import annotations

import random

FLAKY = "flaky"
LONG = " ".join(["word"] * 3000)  # long enough to be summarised in a session's context


class _Program:
    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd
        self.lines: list[str] = []
        self.count = 0
        self.names: list[str] = []  # bound at the top level
        self.blocks: list[str] = []
        self.spread = 0  # > 0: inside a fan-out, a block's branch or a block

    def fresh(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def pick(self, scope: list[str]) -> str | None:
        pool = self.names + scope
        return self.rnd.choice(pool) if pool else None

    def session(self, indent: str, scope: list[str], target: str = "") -> None:
        self.count += 1
        word = FLAKY if not self.spread and self.rnd.random() < 0.15 else "task"
        mention = self.pick(scope) if self.rnd.random() < 0.6 else None
        text = f"{word} {self.count}" + (f" {{{mention}}}" if mention else "")
        self.lines.append(f'{indent}{target}session "{text}"')
        context = self.pick(scope) if self.rnd.random() < 0.4 else None
        if context:
            self.lines.append(f"{indent}  context: {context}")
        if word == FLAKY or self.rnd.random() < 0.1:
            self.lines.append(f"{indent}  retry: {self.rnd.randint(1, 3)}")

    def body(self, indent: str, depth: int, scope: list[str], count: int = 0) -> None:
        for _ in range(count or self.rnd.randint(1, 3)):
            self.statement(indent, depth, scope)

    def statement(self, indent: str, depth: int, scope: list[str], top: bool = False) -> None:
        kinds = ["session", "let"] * 3
        if depth < 2:
            kinds += ["fan_out", "pmap", "parallel", "repeat", "loop", "if", "try", "choice"]
            kinds += ["call"] * 2 if self.blocks else []
        getattr(self, "_" + self.rnd.choice(kinds))(indent, depth, scope, top)

    def _bound(self, name: str, scope: list[str], top: bool) -> None:
        (self.names if top else scope).append(name)

    def _session(self, indent: str, depth: int, scope: list[str], top: bool) -> None:
        self.session(indent, scope)

    def _let(self, indent: str, depth: int, scope: list[str], top: bool) -> None:
        name = self.fresh()
        self.session(indent, scope, f"let {name} = ")
        self._bound(name, scope, top)

    def _fan_out(self, indent: str, depth: int, scope: list[str], top: bool) -> None:
        name = self.fresh()
        items = ", ".join(f'"{c}"' for c in "abcde"[: self.rnd.randint(1, 5)])
        self.lines.append(f"{indent}let {name} = parallel for x in [{items}]:")
        self.spread += 1
        self.body(indent + "  ", depth + 1, [*scope, "x"])
        self.spread -= 1
        self._bound(name, scope, top)

    def _pmap(self, indent: str, depth: int, scope: list[str], top: bool) -> None:
        name = self.fresh()
        items = ", ".join(f'"{c}"' for c in "pqrs"[: self.rnd.randint(1, 4)])
        self.lines.append(f"{indent}let {name} = [{items}] | pmap:")
        self.spread += 1
        self.session(indent + "  ", [*scope, "item"])
        self.spread -= 1
        self._bound(name, scope, top)

    def _parallel(self, indent: str, depth: int, scope: list[str], top: bool) -> None:
        policy = self.rnd.choice(["", ' ("all", on-fail: "continue")', ' (on-fail: "ignore")'])
        self.lines.append(f"{indent}parallel{policy}:")
        self.spread += 1
        names = []
        for _ in range(self.rnd.randint(2, 3)):
            name = self.fresh()
            if self.blocks and self.rnd.random() < 0.3:
                argument = self.pick(scope) or '"plain"'
                block = self.rnd.choice(self.blocks)
                self.lines.append(f"{indent}  {name} = do {block}({argument})")
            else:
                self.session(indent + "  ", scope, f"{name} = ")
            names.append(name)
        self.spread -= 1
        for name in names:
            self._bound(name, scope, top)

    def _repeat(self, indent: str, depth: int, scope: list[str], top: bool) -> None:
        self.lines.append(f"{indent}repeat {self.rnd.randint(1, 3)} as i:")
        self.body(indent + "  ", depth + 1, [*scope, "i"])

    def _loop(self, indent: str, depth: int, scope: list[str], top: bool) -> None:
        rounds = self.rnd.randint(1, 3)
        self.lines.append(f"{indent}loop until **the work {self.count} is done** (max: {rounds}):")
        self.body(indent + "  ", depth + 1, list(scope))

    def _if(self, indent: str, depth: int, scope: list[str], top: bool) -> None:
        self.lines.append(f"{indent}if **the result {self.count} is good**:")
        self.body(indent + "  ", depth + 1, list(scope))
        if self.rnd.random() < 0.5:
            self.lines.append(f"{indent}else:")
            self.body(indent + "  ", depth + 1, list(scope))

    def _try(self, indent: str, depth: int, scope: list[str], top: bool) -> None:
        self.lines.append(f"{indent}try:")
        self.body(indent + "  ", depth + 1, list(scope))
        if not self.spread and self.rnd.random() < 0.5:
            self.lines.append(f'{indent}  throw "broke {self.count}"')
        self.lines.append(f"{indent}catch as err:")
        self.session(indent + "  ", [*scope, "err"])

    def _choice(self, indent: str, depth: int, scope: list[str], top: bool) -> None:
        self.lines.append(f"{indent}choice **the best path after {self.count}**:")
        for label in ("One", "Two"):
            self.lines.append(f'{indent}  option "{label}":')
            self.body(indent + "    ", depth + 1, list(scope), count=1)

    def _call(self, indent: str, depth: int, scope: list[str], top: bool) -> None:
        argument = self.pick(scope) or '"plain"'
        self.lines.append(f"{indent}do {self.rnd.choice(self.blocks)}({argument})")


def runnable_program(seed: int) -> str:
    """The program of ``seed``."""
    rnd = random.Random(seed)
    program = _Program(rnd)
    if rnd.random() < 0.3:
        program.lines.append(f'let big = "{LONG}"')
        program.names.append("big")
    for number in range(rnd.randint(0, 2)):
        name = f"blk{number}"
        program.lines.append(f"block {name}(a):")
        program.spread += 1  # a block may be called from an item
        program.body("  ", 1, ["a"])
        if rnd.random() < 0.5:
            program.lines.append(f'  output out = session "sum up {number} {{a}}"')
        program.spread -= 1
        program.blocks.append(name)
    for _ in range(rnd.randint(2, 5)):
        program.statement("", 0, [], top=True)
    if program.names:
        program.lines.append(f"output result = {program.names[-1]}")
    return "\n".join(program.lines) + "\n"
