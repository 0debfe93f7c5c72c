"""Remote programs (spec prose.md, "Remote programs"): where a `use` source or a `prose run`
target points, and fetching it over HTTPS with the limits of docs/run.md.

Fetching is refused unless the user allowed it (``--allow-remote`` or ``allow-remote`` in
the run configuration): a program from the network runs sessions with the user's keys.
"""

from __future__ import annotations

import hashlib
import json
import re
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

REGISTRY_ENV = "OPENPROSE_REGISTRY_URL"
CA_FILE_ENV = "OPENPROSE_CA_FILE"
DEFAULT_REGISTRY = "https://p.prose.md"
MAX_BYTES = 1_000_000
TIMEOUT = 30.0  # seconds, for the connection and each read
MAX_REDIRECTS = 5

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# `handle/slug` as a command-line target: two plain segments (a file path usually has a
# suffix or more segments, and an existing file always wins).
_HANDLE_SLUG = re.compile(r"@?[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


class RemoteError(Exception):
    """A remote program cannot be used; the message is one line for the user."""


def is_remote(source: str) -> bool:
    """How prose.md reads a `use` source: a URL, `@handle/slug`, or any path with a `/`
    that does not start like a local path (`./`, `../`, `/`, `~`)."""
    if source.startswith(("https://", "http://", "@")):
        return True
    return "/" in source and not source.startswith((".", "/", "~"))


def is_remote_target(target: str) -> bool:
    """``prose run TARGET``: an existing file is always local; a `handle/slug` must have
    exactly two segments and no ``.prose`` suffix."""
    if target.startswith(("https://", "http://", "@")):
        return True
    if Path(target).exists() or target.endswith(".prose"):
        return False
    return _HANDLE_SLUG.fullmatch(target) is not None


@dataclass(frozen=True)
class Location:
    source: str  # as written
    url: str
    handle: str
    slug: str

    @property
    def dirname(self) -> str:
        """The import's directory name in a run directory: ``{handle}--{slug}``."""
        return f"{self.handle}--{self.slug}"


def _safe(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-.") or "program"


def locate(source: str, environ: Mapping[str, str]) -> Location:
    if source.startswith("http://"):
        raise RemoteError(f"{source}: plain http is refused; remote programs need https://")
    if source.startswith("https://"):
        parts = urllib.parse.urlsplit(source)
        if not parts.hostname:
            raise RemoteError(f"{source}: not a URL")
        name = parts.path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".prose")
        return Location(source, source, _safe(parts.hostname), _safe(name))
    path = source.removeprefix("@").strip("/")
    handle, sep, slug = path.partition("/")
    if not sep or not handle or not slug:
        raise RemoteError(f"{source}: a registry program is named handle/slug")
    base = environ.get(REGISTRY_ENV) or DEFAULT_REGISTRY
    if not base.startswith("https://"):
        raise RemoteError(f"{REGISTRY_ENV}={base}: the registry must be an https:// URL")
    url = f"{base.rstrip('/')}/{urllib.parse.quote(path)}"
    return Location(source, url, _safe(handle), _safe(slug.replace("/", "-")))


@dataclass(frozen=True)
class Fetched:
    location: Location
    text: str
    sha256: str
    url: str  # after redirects

    def source_json(self) -> str:
        """What the run directory records next to its cached ``program.prose``."""
        record = {
            "source": self.location.source,
            "url": self.url,
            "sha256": self.sha256,
            "bytes": len(self.text.encode("utf-8")),
        }
        return json.dumps(record, indent=2) + "\n"


class _Redirects(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_REDIRECTS

    def redirect_request(
        self, req: Any, fp: IO[bytes], code: int, msg: str, headers: Any, newurl: str
    ) -> Any:
        if not newurl.startswith("https://"):
            raise RemoteError(f"{req.full_url}: redirected to {newurl}, which is not https://")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def fetch(
    location: Location,
    environ: Mapping[str, str],
    *,
    max_bytes: int = MAX_BYTES,
    timeout: float = TIMEOUT,
) -> Fetched:
    """The program at ``location``; RemoteError (one line) for anything that goes wrong.

    ``OPENPROSE_CA_FILE`` names extra trusted certificates (a private registry, tests)."""
    cafile = environ.get(CA_FILE_ENV) or None
    try:
        context = ssl.create_default_context(cafile=cafile)
    except (OSError, ssl.SSLError) as error:
        raise RemoteError(f"{CA_FILE_ENV}={cafile}: {error}") from None
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context), _Redirects)
    request = urllib.request.Request(
        location.url, headers={"Accept": "text/plain, */*", "User-Agent": "openprose"}
    )
    where = location.url
    try:
        with opener.open(request, timeout=timeout) as response:
            where = response.geturl()
            length = response.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > max_bytes:
                raise RemoteError(f"{where}: larger than the limit of {max_bytes} bytes")
            data = response.read(max_bytes + 1)
    except urllib.error.HTTPError as error:
        raise RemoteError(f"cannot fetch {where}: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise RemoteError(f"cannot fetch {where}: {error.reason}") from None
    except (OSError, ValueError) as error:  # timeouts, resets, a malformed URL
        raise RemoteError(f"cannot fetch {where}: {error or type(error).__name__}") from None
    if len(data) > max_bytes:
        raise RemoteError(f"{where}: larger than the limit of {max_bytes} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RemoteError(f"{where}: not UTF-8 text") from None
    return Fetched(location, text, hashlib.sha256(data).hexdigest(), where)


class RemoteLoader:
    """Fetches each remote source once per run (every program of the run shares it)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ
        self.cache: dict[str, Fetched] = {}

    def load(self, source: str) -> Fetched:
        if source not in self.cache:
            self.cache[source] = fetch(locate(source, self.environ), self.environ)
        return self.cache[source]

    def program(self, source: str) -> tuple[Fetched, Any]:
        """The fetched program and its tree, checked like a local file before it runs."""
        from openprose.checking import check_text
        from openprose.syntax import parse

        fetched = self.load(source)
        # No path: a fetched program must not be checked against the user's files.
        errors = [d for d in check_text(fetched.text) if d.is_error]
        if errors:
            first = errors[0]
            where = f"{fetched.url}:{first.start[0]}"
            raise RemoteError(f"{where} has errors: {first.code} {first.message}")
        return fetched, parse(fetched.text)
