"""Short explanations of keywords, properties and property values, for hover texts.

Each entry is a sentence or two in our own words and a tiny example.  ``keyword_doc`` picks
the variant of a keyword that depends on where it stands (``as`` after a ``use`` names an
import, after ``catch`` the error).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openprose.syntax import tree as t
from openprose.syntax.vocabulary import UNSUPPORTED_STATEMENTS


@dataclass(frozen=True, slots=True)
class Doc:
    summary: str
    example: str = ""


# --------------------------------------------------------------------------- keywords

KEYWORDS: dict[str, Doc] = {
    "session": Doc(
        "Starts an agent session: a subagent receives the prompt, does the work and its "
        "answer becomes the statement's value. Write a prompt string, or `: name` to run a "
        "defined agent (properties below may override its settings).",
        'let notes = session "Summarise the meeting"\nsession: reviewer\n  context: notes',
    ),
    "agent": Doc(
        "Defines a reusable agent: a named template (model, system prompt, memory, skills, "
        "permissions) that sessions refer to with `session: name`.",
        'agent reviewer:\n  model: opus\n  prompt: "You review code carefully"',
    ),
    "let": Doc(
        "Binds a variable to a value, usually a session's answer. A `let` variable may be "
        "reassigned later with `name = ...`.",
        'let draft = session "Write a first draft"',
    ),
    "const": Doc(
        "Binds a variable that can never be reassigned.",
        'const brief = session "Collect the requirements"',
    ),
    "parallel": Doc(
        "Runs each indented branch at the same time and waits for them (all by default). "
        'Modifiers choose a join strategy (`"all"`, `"first"`, `"any"`), a `count` for '
        '`"any"` and an `on-fail` policy. Branches written `name = ...` bind their results.',
        'parallel ("any", count: 2):\n  a = session "Idea A"\n  b = session "Idea B"',
    ),
    "parallel.for": Doc(
        "Makes a `for` loop run all of its iterations at the same time instead of one "
        "after the other.",
        'parallel for file in files:\n  session "Check {file}"',
    ),
    "loop": Doc(
        "Repeats its body without a fixed count: forever (bounded by `max`), `until` a "
        "condition becomes true, or `while` it stays true. Conditions are usually `**...**` "
        "judgements made by the model.",
        'loop until **the tests pass** (max: 5):\n  session "Fix the next failure"',
    ),
    "until": Doc(
        "Ends a `loop` as soon as the condition holds; the condition is checked before each "
        "iteration.",
        'loop until **the draft is approved** (max: 3):\n  session "Revise the draft"',
    ),
    "while": Doc(
        "Keeps a `loop` going as long as the condition holds.",
        'loop while **there are open questions** (max: 10):\n  session "Answer one"',
    ),
    "repeat": Doc(
        "Runs its body a fixed number of times; `as i` names the iteration index (starting at 0).",
        'repeat 3 as attempt:\n  session "Brainstorm idea {attempt}"',
    ),
    "for": Doc(
        "Runs its body once per element of a collection, with the element bound to the "
        "loop variable (and an optional index after a comma).",
        'for topic, i in topics:\n  session "Research {topic}"',
    ),
    "in": Doc(
        "Introduces the collection a `for` loop walks over.",
        'for name in ["alpha", "beta"]:\n  session "Greet {name}"',
    ),
    "in.comparison": Doc(
        "A membership test (`x in y`): outside the language's grammar, so the result is "
        "left to the model's judgement; prefer a `**...**` condition.",
    ),
    "try": Doc(
        "Runs its body and hands any failure to the `catch` clause; `finally` runs "
        "afterwards either way.",
        'try:\n  session "Call the flaky service"\ncatch as err:\n  session "Recover"\n'
        "    context: err",
    ),
    "catch": Doc(
        "Runs when the `try` body fails; `catch as err:` binds the error for this clause.",
        'catch as err:\n  session "Explain what went wrong"\n    context: err',
    ),
    "finally": Doc(
        "Runs after the `try` body (and after `catch`), whether or not something failed.",
        'finally:\n  session "Clean up"',
    ),
    "throw": Doc(
        "Raises an error with a message; alone inside a `catch`, it re-raises the error "
        "being handled.",
        'throw "The input was empty"',
    ),
    "choice": Doc(
        "Lets the model pick one of the `option` clauses according to the criteria, and "
        "runs only that option's body.",
        'choice **the best next step**:\n  option "Ship":\n    session "Release"\n'
        '  option "Polish":\n    session "Refine"',
    ),
    "option": Doc(
        "One labelled alternative of a `choice`.",
        'option "Quick fix":\n  session "Patch it"',
    ),
    "if": Doc(
        "Runs its body when the condition holds; `elif` and `else` clauses give the other "
        "branches. Conditions are normally `**...**` judgements.",
        'if **the report has errors**:\n  session "Fix them"\nelse:\n  session "Publish"',
    ),
    "elif": Doc(
        "Another condition, tried when the conditions before it did not hold.",
        'elif **the report is too long**:\n  session "Shorten it"',
    ),
    "else": Doc(
        "Runs when none of the conditions before it held.",
        'else:\n  session "Carry on"',
    ),
    "do": Doc(
        "`do:` runs an indented sequence of statements as one unit (its value is the last "
        "one's); `do name(args)` runs a defined block.",
        'do review(draft, "strict")',
    ),
    "block": Doc(
        "Defines a reusable sequence of statements with parameters, run with "
        "`do name(args)`. Blocks may be defined after their first use.",
        'block review(text, tone):\n  session "Review {text} in a {tone} tone"',
    ),
    "use": Doc(
        "Imports another program: `@handle/slug` from the registry or a local file such as "
        '`"./helper.prose"`. Call it by its name (or alias) with its inputs.',
        'use "@acme/summarise" as summarise\nlet short = summarise(text: report)',
    ),
    "input": Doc(
        "Declares a value the caller must provide; the description tells them what to give.",
        'input topic: "What to research"',
    ),
    "output": Doc(
        "Binds a value like `let` and makes it part of the program's result for its "
        "callers. Inside a block, it is the block's result.",
        'output summary = session "Summarise the findings"',
    ),
    "resume": Doc(
        "Continues a persistent agent (one with `persist`) with the memory of its earlier "
        "sessions, where `session:` would start it afresh.",
        'resume: planner\n  prompt: "Continue from yesterday\'s plan"',
    ),
    "as": Doc("Gives a name to what the statement introduces."),
    "as.use": Doc(
        "Names the imported program in this file (by default it is the last part of the path).",
        'use "@acme/summarise" as digest',
    ),
    "as.index": Doc(
        "Names the iteration counter of the loop (0, 1, 2...).",
        'repeat 3 as n:\n  session "Attempt {n}"',
    ),
    "as.catch": Doc(
        "Names the error caught by this clause.",
        'catch as problem:\n  session "Diagnose"\n    context: problem',
    ),
    "map": Doc(
        "Pipeline stage: runs the body once per element (bound to `item`) and collects the "
        "results in order.",
        'let titles = posts | map:\n  session "Write a title"\n    context: item',
    ),
    "filter": Doc(
        "Pipeline stage: keeps the elements (bound to `item`) for which the body's answer "
        "is a yes.",
        'let urgent = tickets | filter:\n  session "Is this urgent? yes or no"\n    context: item',
    ),
    "pmap": Doc(
        "Pipeline stage: like `map`, but all elements are processed at the same time.",
        'let notes = pages | pmap:\n  session "Summarise"\n    context: item',
    ),
    "reduce": Doc(
        "Pipeline stage: folds the collection into one value; the two names are the running "
        "accumulator and the current element (the first element starts the accumulator).",
        'let story = scenes | reduce(text, scene):\n  session "Append the scene"\n'
        "    context: [text, scene]",
    ),
    "import": Doc(
        'Legacy skill import (`import "name" from "source"`) from an early dialect; '
        "programs are imported with `use`.",
    ),
    "from": Doc("Part of the legacy `import ... from ...` statement."),
    "not": Doc(
        "Negates a condition; outside the grammar, so prefer saying it in a `**...**` condition.",
    ),
    "and": Doc(
        "Joins two conditions; outside the grammar, so prefer one `**...**` condition.",
    ),
    "or": Doc(
        "Either of two conditions; outside the grammar, so prefer one `**...**` condition.",
    ),
    "is": Doc(
        "A comparison outside the grammar; prefer a `**...**` condition.",
    ),
}

for _word in UNSUPPORTED_STATEMENTS:
    KEYWORDS[_word] = Doc(
        f"`{_word}` is not an OpenProse statement (see the diagnostic on this line for what "
        "to write instead)."
    )


def keyword_doc(leaf: Any) -> tuple[str, Doc] | None:
    """The title and text for a keyword leaf, chosen by the construct it belongs to."""
    word = leaf.value
    parent = leaf.parent
    key = word
    if word == "as":
        if isinstance(parent, t.UseStatement):
            key = "as.use"
        elif isinstance(parent, t.CatchClause):
            key = "as.catch"
        elif isinstance(parent, t.Repeat | t.Loop | t.ForEach):
            key = "as.index"
    elif word == "in" and not isinstance(parent, t.ForEach):
        key = "in.comparison"
    elif word == "parallel" and isinstance(parent, t.ForEach):
        key = "parallel.for"
    doc = KEYWORDS.get(key)
    if doc is None:
        return None
    return word, doc


# --------------------------------------------------------------------------- properties

PROPERTIES: dict[str, Doc] = {
    "model": Doc(
        "Which model runs the agent or session: `haiku` (fast, simple work), `sonnet` "
        "(balanced) or `opus` (hard reasoning). A session's `model` overrides its agent's.",
        "model: sonnet",
    ),
    "prompt": Doc(
        "For an agent, its standing instructions (system prompt); for a session, the task "
        "(it replaces the agent's default task).",
        'prompt: "You check every claim against a source"',
    ),
    "persist": Doc(
        "Gives the agent memory that `resume:` continues: `true` for this run only, "
        "`project` to keep it across runs of this project, `user` to share it across "
        "your projects, or a string naming a directory.",
        "persist: project",
    ),
    "skills": Doc(
        "The imported skills the agent may use, as an array of names.",
        'skills: ["web-search"]',
    ),
    "permissions": Doc(
        "What the agent may touch: `read`, `write` and `execute` take arrays of glob "
        "patterns; `bash` and `network` take `allow`, `deny` or `prompt`.",
        'permissions:\n  read: ["docs/**"]\n  bash: deny',
    ),
    "context": Doc(
        "The earlier results the session gets to see: one variable, an array of them, "
        "`{ a, b }` to pass them by name, or `[]` for a fresh start.",
        "context: [research, feedback]",
    ),
    "retry": Doc(
        "How many more times to try the session when it fails (a positive integer).",
        "retry: 3",
    ),
    "backoff": Doc(
        "The wait between retries: `none` (retry at once), `linear` (same delay each time) "
        "or `exponential` (doubling delays).",
        "backoff: exponential",
    ),
    "read": Doc(
        "Permission: the files the agent may read, as glob patterns.",
        'read: ["src/**", "*.md"]',
    ),
    "write": Doc(
        "Permission: the files the agent may write, as glob patterns.",
        'write: ["reports/"]',
    ),
    "execute": Doc(
        "Permission: the files the agent may execute, as glob patterns.",
        'execute: ["scripts/*.sh"]',
    ),
    "bash": Doc(
        "Permission: shell access, `allow`, `deny` or `prompt` (ask the user each time).",
        "bash: prompt",
    ),
    "network": Doc(
        "Permission: network access, `allow`, `deny` or `prompt` (ask the user each time).",
        "network: deny",
    ),
    "on-fail": Doc(
        'Parallel modifier: what a failing branch does. `"fail-fast"` (default) stops the '
        'others and fails, `"continue"` lets the rest finish then fails, `"ignore"` carries '
        "on regardless.",
        'parallel (on-fail: "continue"):',
    ),
    "count": Doc(
        'Parallel modifier for `"any"`: how many branches must succeed before moving on '
        "(at least 1).",
        'parallel ("any", count: 2):',
    ),
    "max": Doc(
        "Loop modifier: the most iterations a `loop` may run, whatever its condition says.",
        "loop until **done** (max: 10):",
    ),
}

# Values of a few properties (property -> value -> meaning).
VALUES: dict[str, dict[str, str]] = {
    "model": {
        "haiku": "the fastest model, for simple, quick tasks",
        "sonnet": "the balanced, general-purpose model",
        "opus": "the most capable model, for complex reasoning and detailed analysis",
    },
    "persist": {
        "true": "memory kept for this run only",
        "project": "memory kept across runs, in the project's `.prose/` state",
        "user": "memory kept across runs and projects, in your home's `~/.prose/`",
    },
    "backoff": {
        "none": "retry at once",
        "linear": "wait the same delay before each retry",
        "exponential": "double the delay before each retry",
    },
    "bash": {
        "allow": "permission granted",
        "deny": "permission refused",
        "prompt": "ask the user each time",
    },
}
VALUES["network"] = VALUES["bash"]

DISCRETION = Doc(
    "A discretion condition: the text between `**` markers is not evaluated by a program "
    "but judged by the model at run time, in context. `***...***` lets it span lines. "
    "Say concretely what must be true.",
    'if **the summary mentions every decision**:\n  session "Publish it"',
)


def render(title: str, doc: Doc) -> str:
    """Markdown for a hover: the title, the explanation and the example."""
    text = f"{title}\n\n{doc.summary}"
    if doc.example:
        text += f"\n\n```prose\n{doc.example}\n```"
    return text
