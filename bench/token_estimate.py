"""Token estimate error against a provider's counter on the corpus prompts (issue 11 figure).

The VM budgets a session with an estimate, four characters a token rounded up per piece of
text (``openprose.vm.context.tokens.estimate``, docs/context.md), unless the backend has a
counter.  This script measures how far that estimate is from a real tokenizer on the prompts
of the corpus (``../shared/corpus``, read where it lies): every ``session``'s and
``resume``'s prompt (inline, or its ``prompt:`` property when that is a string) and every
agent's ``prompt:`` (the system layer), as written (``{name}`` interpolations left in,
escapes decoded).  A session's request is its agent's prompt and its own (what
``Plan.layers`` counts as system and prompt, without context bindings).

Counters, where available:

* ``anthropic``: Anthropic's token-counting endpoint (``AnthropicBackend.count_tokens``),
  only with ``--network`` and ``ANTHROPIC_API_KEY`` set.  It counts a whole request, so the
  request's framing (measured on a one-word request, minus that word's token) is subtracted
  from each count.  At most ``--max-requests`` texts (default 300) are sent, spread
  evenly over the corpus.
* ``tiktoken``: OpenAI's ``o200k_base`` encoding (GPT-4o/GPT-5 family), if the package is
  importable and its encoding file is cached locally; without ``--network`` the download
  it would otherwise make is refused, and the counter is then reported as not available.

With no counter (no network, no tiktoken: the usual case here and in CI) the script says
so and prints the estimate's distribution over the corpus prompts, with what the totals
would be at other characters-per-token ratios; it exits 0 either way.  Nothing is written.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
try:
    import openprose  # noqa: F401
except ImportError:  # pragma: no cover - running from a bare checkout
    sys.path.insert(0, str(REPO_ROOT / "server"))

from openprose.syntax import parse  # noqa: E402
from openprose.syntax import tree as t  # noqa: E402
from openprose.vm.context.tokens import CHARS_PER_TOKEN, estimate  # noqa: E402

CORPUS_DIR = REPO_ROOT.parent / "shared" / "corpus"
QUICK_FILES = 25
RATIOS = (3.0, 3.5, 4.0, 4.5, 5.0)  # characters per token, for the "what if" table


@dataclass(frozen=True)
class Text:
    kind: str  # "session" (a session's or resume's prompt) | "agent" (an agent's prompt)
    where: str  # file:line
    text: str


@dataclass(frozen=True)
class Request:
    """A session as the VM would budget it: its agent's prompt and its own."""

    system: str
    prompt: str


def walk(root: Any) -> Iterator[Any]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(getattr(node, "children", None) or ()))


def string_of(node: Any) -> str | None:
    return node.text if isinstance(node, t.String) else None


def prompt_property(node: Any) -> str | None:
    prop = node.get_property("prompt")
    return string_of(prop.value) if prop is not None else None


def collect(root: Path, files: list[Path]) -> tuple[list[Text], list[Request], int]:
    """The corpus texts, the session requests, and how many files failed to read.  The
    corpus holds several versions of some programs: a text or request found again is not
    counted twice."""
    texts: list[Text] = []
    requests: list[Request] = []
    unreadable = 0
    for path in files:
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            unreadable += 1
            continue
        module = parse(source)  # never raises; a broken statement is an error node, skipped
        name = path.relative_to(root)
        agents: dict[str, str] = {}
        sessions: list[tuple[Any, str]] = []
        for node in walk(module):
            if isinstance(node, t.AgentDefinition):
                system = prompt_property(node)
                if node.name and system:
                    agents[node.name] = system
                    texts.append(Text("agent", f"{name}:{node.start_pos[0]}", system))
            elif isinstance(node, (t.Session, t.Resume)):
                inline = node.prompt if isinstance(node, t.Session) else None
                prompt = string_of(inline) if inline is not None else prompt_property(node)
                if prompt:
                    texts.append(Text("session", f"{name}:{node.start_pos[0]}", prompt))
                    sessions.append((node, prompt))
        for node, prompt in sessions:
            agent = node.agent.value if node.agent is not None else None
            requests.append(Request(agents.get(agent or "", ""), prompt))
    distinct = {(x.kind, x.text): x for x in reversed(texts)}  # the first place found
    return list(reversed(distinct.values())), list(dict.fromkeys(requests)), unreadable


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(fraction * len(ordered)))) - 1]


def spread(values: list[float], unit: str = "", digits: int = 0) -> str:
    def f(x: float) -> str:
        return f"{x:,.{digits}f}{unit}"

    return (
        f"min {f(min(values))}, median {f(statistics.median(values))}, "
        f"p95 {f(percentile(values, 0.95))}, max {f(max(values))}"
    )


def distribution(texts: list[Text], requests: list[Request]) -> None:
    chars = [len(x.text) for x in texts]
    tokens = [estimate(x.text) for x in texts]
    total_chars, total_tokens = sum(chars), sum(tokens)
    kinds = {kind: sum(1 for x in texts if x.kind == kind) for kind in ("session", "agent")}
    non_ascii = sum(1 for x in texts for c in x.text if ord(c) > 127)
    print(f"distinct prompts: {len(texts):,} ({kinds['session']:,} session/resume prompts, "
          f"{kinds['agent']:,} agent prompts), {total_chars:,} characters")  # fmt: skip
    print(f"   characters a prompt: {spread([float(c) for c in chars])}")
    print(f"   estimated tokens a prompt ({CHARS_PER_TOKEN} characters a token, rounded up): "
          f"{spread([float(x) for x in tokens])}; total {total_tokens:,}")  # fmt: skip
    rounding = total_tokens - estimate("".join(x.text for x in texts))
    print(f"   rounding up per prompt adds {rounding:,} tokens "
          f"({rounding / max(total_tokens, 1):.1%} of the total)")  # fmt: skip
    print(f"   characters outside ASCII: {non_ascii:,} ({non_ascii / max(total_chars, 1):.2%}); "
          f"prompts with an interpolation {{...}}: "
          f"{sum(1 for x in texts if '{' in x.text):,}")  # fmt: skip
    sent = [estimate(r.system) + estimate(r.prompt) for r in requests]
    print(f"distinct session requests (agent prompt + prompt): {len(requests):,}; tokens "
          f"{spread([float(x) for x in sent])}")  # fmt: skip
    print(f"if a tokenizer's true ratio on these prompts were R characters a token, the "
          f"estimate ({CHARS_PER_TOKEN}) would be off by:")  # fmt: skip
    for ratio in RATIOS:
        true = total_chars / ratio
        print(f"   R = {ratio:.1f}: true total about {true:10,.0f} tokens, estimate "
              f"{(total_tokens - true) / true:+7.1%}")  # fmt: skip


def compare(label: str, texts: list[Text], counts: list[int]) -> None:
    """Relative error of the estimate, (estimate - count) / count, per text and in total."""
    pairs = [(estimate(x.text), c, x) for x, c in zip(texts, counts, strict=True) if c > 0]
    errors = [(e - c) / c for e, c, _ in pairs]
    total_e, total_c = sum(e for e, _, _ in pairs), sum(c for _, c, _ in pairs)
    chars = sum(len(x.text) for _, _, x in pairs)
    under = [err for err in errors if err < 0]
    print(f"{label}: {len(pairs):,} prompts counted, {total_c:,} tokens "
          f"({chars / max(total_c, 1):.2f} characters a token)")  # fmt: skip
    print(f"   estimate vs count, total: {total_e:,} vs {total_c:,} "
          f"({(total_e - total_c) / max(total_c, 1):+.1%})")  # fmt: skip
    print(f"   per prompt: median {statistics.median(errors):+.1%}, "
          f"p5 {percentile(errors, 0.05):+.1%}, p95 {percentile(errors, 0.95):+.1%}, "
          f"mean |error| {statistics.fmean(abs(x) for x in errors):.1%}")  # fmt: skip
    worst = min(pairs, key=lambda p: (p[0] - p[1]) / p[1])
    print(f"   under-counted (the risky side for a window): {len(under):,} prompts "
          f"({len(under) / len(errors):.0%}); worst {worst[2].where}: "
          f"estimate {worst[0]:,}, count {worst[1]:,}")  # fmt: skip


def tiktoken_counter(network: bool) -> tuple[Callable[[str], int] | None, str]:
    try:  # optional, and not a dependency of the project: imported by name
        tiktoken = importlib.import_module("tiktoken")
        loader = importlib.import_module("tiktoken.load")
    except ImportError:
        return None, "tiktoken is not installed"
    name = "o200k_base"
    if not network:
        # tiktoken downloads an encoding file it has not cached: refuse that offline, so that
        # "not available" never means "quietly reached the network".
        if not hasattr(loader, "read_file"):
            return None, "tiktoken: cannot make sure it stays offline (pass --network)"

        def offline(blobpath: str) -> bytes:
            raise OSError(f"not cached locally ({blobpath}); --network allows the download")

        setattr(loader, "read_file", offline)  # noqa: B010 - an untyped optional module
    try:
        encoding = tiktoken.get_encoding(name)
    except Exception as error:  # any failure to load it means: no counter here
        return None, f"tiktoken {name}: {error}"
    return (lambda text: len(encoding.encode(text, disallowed_special=()))), f"tiktoken {name}"


def anthropic_counts(texts: list[Text], model: str | None) -> tuple[list[int] | None, str]:
    from openprose.vm.backends.anthropic_backend import AnthropicBackend
    from openprose.vm.backends.base import BackendError, SessionRequest

    backend = AnthropicBackend(os.environ["ANTHROPIC_API_KEY"])

    async def count(text: str) -> int:
        return await backend.count_tokens(SessionRequest(text, "bench", model=model))

    async def run() -> list[int]:
        # The request's framing: a one-word request counts the word (1 token) and the rest.
        framing = await count("hello") - 1
        return [await count(x.text) - framing for x in texts]

    try:
        return asyncio.run(run()), f"anthropic count_tokens ({model or 'default model'})"
    except BackendError as error:
        return None, f"anthropic count_tokens: {error}"


def evenly(texts: list[Text], limit: int) -> list[Text]:
    if len(texts) <= limit:
        return texts
    step = len(texts) / limit
    return [texts[int(i * step)] for i in range(limit)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"the first {QUICK_FILES} files")
    parser.add_argument(
        "--network",
        action="store_true",
        help="allow the network: Anthropic's counter (with ANTHROPIC_API_KEY), tiktoken's "
        "download of its encoding",
    )
    parser.add_argument("--max-requests", type=int, default=300, help="Anthropic counts")
    parser.add_argument("--model", help="the model Anthropic counts for (default: the VM's)")
    parser.add_argument("--corpus", type=Path, default=CORPUS_DIR)
    args = parser.parse_args()
    started = time.perf_counter()
    corpus = args.corpus.resolve()
    if not corpus.is_dir():
        print(f"no corpus at {corpus}: nothing to measure")
        return
    files = sorted(corpus.rglob("*.prose"))
    if args.quick:
        files = files[:QUICK_FILES]
    texts, requests, unreadable = collect(corpus, files)
    print(f"corpus: {len(files):,} programs under {corpus}"
          + (f" ({unreadable} unreadable)" if unreadable else ""))  # fmt: skip
    if not texts:
        print("no prompts found")
        return
    distribution(texts, requests)

    missing: list[str] = []
    counted = False
    if args.network and os.environ.get("ANTHROPIC_API_KEY"):
        sample = evenly(texts, args.max_requests)
        counts, label = anthropic_counts(sample, args.model)
        if counts is not None:
            compare(label, sample, counts)
            counted = True
        else:
            missing.append(label)
    else:
        missing.append(
            "anthropic count_tokens: needs --network and ANTHROPIC_API_KEY"
            if args.network
            else "anthropic count_tokens: not asked without --network"
        )
    tokenize, label = tiktoken_counter(args.network)
    if tokenize is not None:
        compare(label + " (OpenAI's tokenizer)", texts, [tokenize(x.text) for x in texts])
        counted = True
    else:
        missing.append(label)
    if not counted:
        print("no provider counter available here: " + "; ".join(missing))
    elif missing:
        print("not measured: " + "; ".join(missing))
    print(f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
