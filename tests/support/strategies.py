"""The hypothesis strategies the property tests share: `programs`, well-formed programs of
every statement kind with comments, blank lines and both line endings; `texts`, arbitrary text
and fragments of OpenProse joined at random (the formatter's and the line diff's inputs)."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.support.fragments import FRAGMENTS

NAMES = ["draft", "notes", "alpha", "beta", "gamma", "summary", "verdict", "plan"]
MODELS = ["sonnet", "opus", "haiku"]
PROMPTS = ["Write it", "Review {draft}", "a = b, c", "Say #1 thing", "  padded  ", "x"]
TRIPLE = [
    '"""\nline one\n  line two\n"""',
    '"""\n      oddly\n indented\n\tand tabbed\n   """',
    '"""one line"""',
]
CONDITIONS = ["**done**", "**the tests pass**", "**  spaced   out **", "***multi\n  line***"]
COMMENT_TEXTS = ["# note", "#tight", "# with  spaces", "# TODO: x = y", "# {brace} [x]"]


class Gen:
    """Draws pieces of programs.  Every line is ``indent + content``; blocks choose their own
    width (2, 3 or 4 spaces), consistent inside the block."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.lines: list[str] = []
        self.defined: list[str] = ["draft"]

    # spacing

    def sp(self) -> str:
        """A required space."""
        return self.draw(st.sampled_from([" ", " ", " ", "  ", "   "]))

    def op(self) -> str:
        """An optional space."""
        return self.draw(st.sampled_from(["", "", " ", " ", "  "]))

    def width(self) -> str:
        return " " * self.draw(st.sampled_from([2, 3, 4]))

    def name(self) -> str:
        return self.draw(st.sampled_from(NAMES))

    def var(self) -> str:
        return self.draw(st.sampled_from(self.defined))

    def prompt(self) -> str:
        if self.draw(st.integers(0, 5)) == 0:
            return self.draw(st.sampled_from(TRIPLE))
        return '"' + self.draw(st.sampled_from(PROMPTS)) + '"'

    def trailing(self) -> str:
        if self.draw(st.integers(0, 4)) == 0:
            return self.op() + " " + self.draw(st.sampled_from(COMMENT_TEXTS))
        return ""

    def emit(self, indent: str, content: str) -> None:
        self.lines.append(indent + content + self.trailing())

    def before(self, indent: str, first: bool) -> None:
        """Blank lines and own-line comments before a statement."""
        for _ in range(self.draw(st.integers(0, 2))):
            kind = self.draw(st.integers(0, 3))
            if kind == 0:
                self.lines.append("")
            elif kind == 1:
                self.lines.append(self.draw(st.sampled_from(["", "  ", "\t"])))
            elif kind == 2 or first:
                self.lines.append(indent + self.draw(st.sampled_from(COMMENT_TEXTS)))
            else:
                # A comment at some other column (the printer decides where it belongs).
                column = " " * self.draw(st.integers(0, 8))
                self.lines.append(column + self.draw(st.sampled_from(COMMENT_TEXTS)))

    # statements

    def block(self, indent: str, depth: int, top: bool = False, count: int = 0) -> None:
        inner = indent + self.width()
        for i in range(count or self.draw(st.integers(1, 3))):
            self.statement(inner, depth + 1, first=i == 0, top=top)

    def statement(self, indent: str, depth: int, first: bool = False, top: bool = False) -> None:
        self.before(indent, first)
        kinds = ["session", "let", "arrow", "do", "call"]
        if depth < 3:
            kinds += ["parallel", "loop", "repeat", "for", "if", "try", "pipe", "chain"]
        if top:
            kinds += ["agent", "block", "agent"]
        kind = self.draw(st.sampled_from(kinds))
        getattr(self, "s_" + kind)(indent, depth)

    def properties(self, indent: str, agent: bool) -> None:
        inner = indent + self.width()
        keys = self.draw(
            st.lists(
                st.sampled_from(
                    ["model", "prompt", "skills", "permissions", "context", "retry"]
                    if agent
                    else ["model", "context", "retry", "prompt"]
                ),
                min_size=1,
                max_size=4,
                unique=True,
            )
        )
        for i, key in enumerate(keys):
            if i and self.draw(st.integers(0, 3)) == 0:
                self.lines.append("")
            colon = self.op() + ":" + self.op()
            if key == "model":
                self.emit(inner, "model" + colon + self.draw(st.sampled_from(MODELS)))
            elif key == "prompt":
                self.emit(inner, "prompt" + colon + self.prompt())
            elif key == "retry":
                self.emit(inner, "retry" + colon + str(self.draw(st.integers(1, 5))))
            elif key == "skills":
                o = self.op
                self.emit(inner, f'skills{colon}[{o()}"a"{o()},{o()}"b"{o()}]')
            elif key == "context":
                self.emit(inner, "context" + colon + self.context())
            else:
                self.emit(inner, "permissions" + self.op() + ":")
                deeper = inner + self.width()
                o = self.op
                self.emit(deeper, f'read{o()}:{o()}[{o()}"*.md"{o()},{o()}"docs/**"{o()}]')
                self.emit(deeper, "bash" + self.op() + ":" + self.op() + "deny")

    def context(self) -> str:
        o = self.op
        form = self.draw(st.integers(0, 2))
        if form == 0:
            return self.var()
        if form == 1:
            return f"[{o()}{self.var()}{o()},{o()}{self.var()}{o()}]"
        return "{" + o() + self.var() + o() + "," + o() + self.var() + o() + "}"

    def session(self) -> str:
        return "session" + self.sp() + self.prompt()

    def maybe_properties(self, indent: str) -> None:
        if self.draw(st.booleans()):
            self.properties(indent, agent=False)

    def s_session(self, indent: str, depth: int) -> None:
        if "writer" in self.defined and self.draw(st.booleans()):
            self.emit(indent, "session" + self.op() + ":" + self.op() + "writer")
        else:
            self.emit(indent, self.session())
        self.maybe_properties(indent)

    def s_let(self, indent: str, depth: int) -> None:
        keyword = self.draw(st.sampled_from(["let", "const"]))
        name = self.name()
        self.emit(indent, keyword + self.sp() + name + self.op() + "=" + self.op() + self.session())
        self.maybe_properties(indent)
        self.defined.append(name)

    def s_arrow(self, indent: str, depth: int) -> None:
        arrow = self.op() + "->" + self.op()
        self.emit(indent, self.session() + arrow + self.session() + arrow + self.session())

    def s_do(self, indent: str, depth: int) -> None:
        blocks = [n for n in self.defined if n.startswith("step")]
        # bool(): mypy would infer the draw's type from the list on the left of `and`.
        if bool(blocks) and self.draw(st.booleans()):
            o = self.op
            self.emit(indent, f'do{self.sp()}{blocks[-1]}({o()}"x"{o()},{o()}"y"{o()})')
        else:
            self.emit(indent, "do" + self.op() + ":")
            self.block(indent, depth)

    def s_call(self, indent: str, depth: int) -> None:
        o = self.op
        name = self.name()
        self.emit(indent, f'let {name}{o()}={o()}research({o()}topic{o()}:{o()}"x"{o()})')
        self.emit(indent, self.session())
        inner = indent + self.width()
        self.emit(inner, "context" + o() + ":" + o() + name + ".findings")
        self.defined.append(name)

    def s_parallel(self, indent: str, depth: int) -> None:
        o = self.op
        modifiers = self.draw(
            st.sampled_from(
                [
                    "",
                    f'{self.sp()}({o()}"any"{o()},{o()}count{o()}:{o()}1{o()})',
                    f'({o()}on-fail{o()}:{o()}"continue"{o()})',
                    f'{self.sp()}({o()}"first"{o()})',
                ]
            )
        )
        self.emit(indent, "parallel" + modifiers + o() + ":")
        inner = indent + self.width()
        for i in range(self.draw(st.integers(2, 3))):
            self.before(inner, first=i == 0)
            if self.draw(st.booleans()):
                name = self.name()
                self.emit(inner, name + o() + "=" + o() + self.session())
                self.defined.append(name)
            else:
                self.emit(inner, self.session())
            self.maybe_properties(inner)

    def s_loop(self, indent: str, depth: int) -> None:
        o = self.op
        condition = self.draw(st.sampled_from(CONDITIONS))
        word = self.draw(st.sampled_from(["until", "while"]))
        header = f"loop{self.sp()}{word}{self.sp()}{condition}"
        if self.draw(st.booleans()):
            header += f"{self.sp()}({o()}max{o()}:{o()}3{o()})"
        if self.draw(st.booleans()):
            header += f"{self.sp()}as{self.sp()}i"
        self.emit(indent, header + o() + ":")
        self.block(indent, depth)

    def s_repeat(self, indent: str, depth: int) -> None:
        self.emit(indent, f"repeat{self.sp()}3{self.sp()}as{self.sp()}i{self.op()}:")
        self.block(indent, depth)

    def s_for(self, indent: str, depth: int) -> None:
        prefix = "parallel" + self.sp() if self.draw(st.booleans()) else ""
        o = self.op
        self.emit(
            indent, f"{prefix}for{self.sp()}x{o()},{o()}j{self.sp()}in{self.sp()}{self.var()}{o()}:"
        )
        self.block(indent, depth)

    def s_if(self, indent: str, depth: int) -> None:
        o = self.op
        self.emit(indent, f"if{self.sp()}{self.draw(st.sampled_from(CONDITIONS))}{o()}:")
        self.block(indent, depth)
        for _ in range(self.draw(st.integers(0, 2))):
            self.before(indent, first=False)
            self.emit(indent, f"elif{self.sp()}**another case**{o()}:")
            self.block(indent, depth)
        if self.draw(st.booleans()):
            self.before(indent, first=False)
            self.emit(indent, "else" + o() + ":")
            self.block(indent, depth)

    def s_try(self, indent: str, depth: int) -> None:
        o = self.op
        self.emit(indent, "try" + o() + ":")
        self.block(indent, depth)
        self.before(indent, first=False)
        if self.draw(st.booleans()):
            self.emit(indent, f"catch{self.sp()}as{self.sp()}err{o()}:")
        else:
            self.emit(indent, "catch" + o() + ":")
        inner = indent + self.width()
        if self.draw(st.booleans()):
            self.emit(inner, "throw" + self.sp() + '"failed"')
        else:
            self.emit(inner, self.session())
        if self.draw(st.booleans()):
            self.before(indent, first=False)
            self.emit(indent, "finally" + o() + ":")
            self.block(indent, depth)

    def stage(self) -> str:
        o = self.op
        stages = ["map", "filter", "pmap", f"reduce({o()}acc{o()},{o()}x{o()})"]
        return self.draw(st.sampled_from(stages)) + o() + ":"

    def s_pipe(self, indent: str, depth: int) -> None:
        o = self.op
        name = self.name()
        self.emit(indent, f"let{self.sp()}{name}{o()}={o()}{self.var()}{o()}|{o()}{self.stage()}")
        self.block(indent, depth, count=1)
        self.defined.append(name)

    def s_chain(self, indent: str, depth: int) -> None:
        o = self.op
        name = self.name()
        self.emit(indent, f"let{self.sp()}{name}{o()}={o()}{self.var()}")
        stage_indent = indent + self.width()
        for _ in range(self.draw(st.integers(1, 3))):
            self.emit(stage_indent, "|" + self.sp() + self.stage())
            body = stage_indent + self.width()
            self.emit(body, self.session())
            if self.draw(st.booleans()):
                self.emit(body + self.width(), "context" + o() + ":" + o() + "item")
        self.defined.append(name)

    def s_agent(self, indent: str, depth: int) -> None:
        name = self.draw(st.sampled_from(["writer", "critic"]))
        self.emit(indent, "agent" + self.sp() + name + self.op() + ":")
        self.properties(indent, agent=True)
        self.defined.append(name)

    def s_block(self, indent: str, depth: int) -> None:
        o = self.op
        name = f"step{len(self.lines)}"
        self.emit(indent, f"block{self.sp()}{name}({o()}a{o()},{o()}b{o()}){o()}:")
        self.block(indent, depth)
        self.defined.append(name)


@st.composite
def programs(draw: st.DrawFn) -> str:
    gen = Gen(draw)
    gen.lines.append("use " + '"@acme/research"' + " as research")
    for _ in range(draw(st.integers(1, 5))):
        gen.statement("", 0, top=True)
    gen.before("", first=False)  # blank lines or comments at the end
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    text = eol.join(gen.lines)
    ending = draw(st.sampled_from(["", eol, eol + eol, eol + "  " + eol]))
    return text + ending


texts = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join),
)
