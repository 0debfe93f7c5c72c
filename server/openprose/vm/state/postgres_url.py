"""Where the ``postgres`` state backend connects, and how that address is shown.

The URL comes from, in the spec's order (spec/state/postgres.md, "Environment Variable
Precedence"): ``OPENPROSE_POSTGRES_URL`` in the project's ``.prose/.env``, then
``OPENPROSE_POSTGRES_URL`` in the environment, then ``DATABASE_URL`` in the environment.
The project's file wins so that a variable left in a shell by another project does not send
this project's runs to that project's database; ``DATABASE_URL`` comes last because many
applications set it for their own database.

A URL holds a password; nothing here or in the backend prints, logs or stores it: every
message and every ``RunInfo.location`` goes through ``redact``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from openprose.vm.state.base import StateError

VARIABLE = "OPENPROSE_POSTGRES_URL"
FALLBACK = "DATABASE_URL"
ENV_FILE = Path(".prose") / ".env"
MASK = "***"

_QUERY_PASSWORD = re.compile(r"([?&]password=)([^&#]*)", re.IGNORECASE)
# libpq's keyword/value form: password=secret or password='se cret'
_KEYWORD_PASSWORD = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)", re.IGNORECASE)


@dataclass(frozen=True)
class Source:
    url: str
    origin: str  # where it came from, for messages: ".prose/.env", "OPENPROSE_POSTGRES_URL"...


def redact(url: str) -> str:
    """``url`` with every password replaced by ``***`` (``postgresql://user:***@host/db``).

    Errs on the side of hiding: in a URL everything between the user name and the last
    ``@`` is taken to be the password, since a hand-written password may hold ``/``, ``?``
    or ``@`` without percent-encoding."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return _KEYWORD_PASSWORD.sub(lambda m: m.group(1) + MASK, url)
    at = rest.rfind("@")
    if at >= 0:
        user, colon, _password = rest[:at].partition(":")
        if colon:
            rest = f"{user}:{MASK}{rest[at:]}"
    rest = _QUERY_PASSWORD.sub(lambda m: m.group(1) + MASK, rest)
    return f"{scheme}{sep}{rest}"


def passwords(url: str) -> list[str]:
    """The password(s) ``url`` holds, as written and percent-decoded (to scrub messages)."""
    found: list[str] = []
    _scheme, sep, rest = url.partition("://")
    if sep:
        at = rest.rfind("@")
        if at >= 0:
            _user, colon, password = rest[:at].partition(":")
            if colon:
                found.append(password)
        found.extend(m.group(2) for m in _QUERY_PASSWORD.finditer(rest))
    else:
        found.extend(m.group(2).strip("'") for m in _KEYWORD_PASSWORD.finditer(url))
    out: list[str] = []
    for password in found:
        for form in (password, unquote(password)):
            if form and form not in out:
                out.append(form)
    return out


def scrub(message: str, url: str) -> str:
    """A driver's message with the URL and any password in it hidden."""
    if url:
        message = message.replace(url, redact(url))
    for password in sorted(passwords(url), key=len, reverse=True):
        message = message.replace(password, MASK)
    return message


def read_env_file(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines of a dotenv file (``export``, quotes and ``#`` comments allowed)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        key, eq, value = line.partition("=")
        if not eq:
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = value.split(" #", 1)[0].rstrip()
        values[key.strip()] = value
    return values


def find_url(project_root: Path, environ: Mapping[str, str]) -> Source:
    """The URL to connect to, by the precedence above; StateError when none is set."""
    env_file = project_root / ENV_FILE
    from_file = read_env_file(env_file).get(VARIABLE, "")
    if from_file:
        return Source(from_file, str(ENV_FILE))
    for name in (VARIABLE, FALLBACK):
        if environ.get(name, ""):
            return Source(environ[name], f"${name}")
    raise StateError(
        f"the postgres state backend needs a PostgreSQL URL: set {VARIABLE} in {env_file} "
        f"or in the environment (or DATABASE_URL), e.g. "
        f"{VARIABLE}=postgresql://user:password@localhost:5432/prose"
    )
