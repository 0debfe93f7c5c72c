"""Remote programs against a local HTTPS server on 127.0.0.1 with a certificate made for the
test: URLs, registry handle/slug, a remote `use`, and every refusal (docs/run.md)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from openprose.vm.backends.offline import OfflineBackend
from openprose.vm.remote import (
    CA_FILE_ENV,
    REGISTRY_ENV,
    RemoteError,
    RemoteLoader,
    fetch,
    is_remote,
    is_remote_target,
    locate,
)
from openprose.vm.runner import run_file

RESEARCH = """\
input topic: "What to look up"
let found = session "Find facts about {topic}"
output facts = found
output verdict = "fine"
"""

HELLO = 'output greeting = session "Say hello"\n'

# path -> (status, headers, body)
Routes = dict[str, tuple[int, dict[str, str], bytes]]


def _certificate(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "cert.pem", directory / "key.pem"
    if shutil.which("openssl"):
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out", str(cert),
             "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
            check=True, capture_output=True,
        )  # fmt: skip
        return cert, key
    pytest.importorskip("cryptography")
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    private = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(private, hashes.SHA256())
    )
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(
        private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert, key


class Registry:
    def __init__(self, base: str, ca: Path, routes: Routes) -> None:
        self.base = base
        self.ca = ca
        self.routes = routes

    def serve(self, path: str, body: str | bytes, status: int = 200, **headers: str) -> str:
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.routes[path] = (status, headers, data)
        return self.base + path

    def env(self) -> dict[str, str]:
        return {REGISTRY_ENV: self.base, CA_FILE_ENV: str(self.ca), "NO_PROXY": "*"}


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    cert, key = _certificate(tmp_path_factory.mktemp("tls"))
    routes: Routes = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, headers, body = routes.get(self.path, (404, {}, b"not here"))
            self.send_response(status)
            for header, value in headers.items():
                self.send_header(header.replace("_", "-"), value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Registry(f"https://127.0.0.1:{server.server_address[1]}", cert, routes)
    finally:
        server.shutdown()
        server.server_close()


def test_sources_resolve_as_prose_md_says() -> None:
    env = {REGISTRY_ENV: "https://registry.test/base/"}
    assert [is_remote(s) for s in ("./x", "../x", "/x", "~/x", "x", "a/b", "@a/b")] == [
        False, False, False, False, False, True, True,
    ]  # fmt: skip
    for source in ("alice/research", "@alice/research"):
        where = locate(source, env)
        assert where.url == "https://registry.test/base/alice/research"
        assert where.dirname == "alice--research"
    assert locate("alice/research", {}).url == "https://p.prose.md/alice/research"
    url = locate("https://example.test:8443/x/My Program.prose?v=1", {})
    assert url.dirname == "example.test--My-Program"
    with pytest.raises(RemoteError, match="plain http is refused"):
        locate("http://example.test/a.prose", {})
    with pytest.raises(RemoteError, match="must be an https"):
        locate("alice/research", {REGISTRY_ENV: "http://127.0.0.1:1"})


def test_an_existing_file_is_never_a_remote_target(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "alice").mkdir()
    assert is_remote_target("alice/research") and is_remote_target("@a/b")
    (tmp_path / "alice" / "research").write_text(HELLO, encoding="utf-8")
    assert not is_remote_target("alice/research")
    assert not is_remote_target("bob/x.prose") and not is_remote_target("a/b/c")


def test_fetch_records_the_hash_of_what_it_read(registry: Registry) -> None:
    registry.serve("/alice/hello", HELLO)
    got = fetch(locate("alice/hello", registry.env()), registry.env())
    assert got.text == HELLO
    assert got.sha256 == hashlib.sha256(HELLO.encode()).hexdigest()
    registry.serve("/old", "", status=301, Location=f"{registry.base}/alice/hello")
    moved = fetch(locate(f"{registry.base}/old", registry.env()), registry.env())
    assert (moved.text, moved.url) == (HELLO, f"{registry.base}/alice/hello")


def test_fetch_refusals_are_one_clear_line(registry: Registry) -> None:
    env = registry.env()
    registry.serve("/big", b"x" * 1_000_001)
    with pytest.raises(RemoteError, match="larger than the limit of 1000000 bytes"):
        fetch(locate(f"{registry.base}/big", env), env)
    with pytest.raises(RemoteError, match=r"HTTP 404 Not Found"):
        fetch(locate("nobody/nothing", env), env)
    registry.serve("/moved", "", status=302, Location="http://127.0.0.1:1/a.prose")
    with pytest.raises(RemoteError, match="not https://"):
        fetch(locate(f"{registry.base}/moved", env), env)
    # Without the test's certificate, the server is not trusted.
    with pytest.raises(RemoteError, match="CERTIFICATE_VERIFY_FAILED"):
        fetch(locate(f"{registry.base}/alice/hello", {}), {})


def _run_main(tmp_path: Path, source: str, remote: RemoteLoader | None) -> Any:
    main = tmp_path / "main.prose"
    main.write_text(source, encoding="utf-8")
    return asyncio.run(
        run_file(main, backend=OfflineBackend(), runs_root=tmp_path / "runs", remote=remote)
    )


CALLER = """\
use "alice/research" as research
let r = research(topic: "bees")
let { facts } = research(topic: "ants")
output both = "{r.verdict} / {facts}"
"""


def test_a_remote_use_runs_with_inputs_and_is_cached_with_its_hash(
    registry: Registry, tmp_path: Path
) -> None:
    registry.serve("/alice/research", RESEARCH)
    result = _run_main(tmp_path, CALLER, RemoteLoader(registry.env()))
    assert result.status == "success", result.error
    assert result.outputs["both"] == (
        "fine / [dry run] Find facts about ants (agent: -; model: default)"
    )
    imports = result.run_dir / "imports"
    assert sorted(p.name for p in imports.iterdir()) == ["alice--research", "alice--research-2"]
    cached = imports / "alice--research"
    assert (cached / "program.prose").read_text(encoding="utf-8") == RESEARCH
    record = json.loads((cached / "source.json").read_text(encoding="utf-8"))
    assert record == {
        "source": "alice/research",
        "url": f"{registry.base}/alice/research",
        "sha256": hashlib.sha256(RESEARCH.encode()).hexdigest(),
        "bytes": len(RESEARCH),
    }
    assert (cached / "bindings" / "facts.md").is_file()


def test_a_remote_use_is_refused_unless_allowed(tmp_path: Path) -> None:
    result = _run_main(tmp_path, CALLER, None)
    assert result.status == "error"
    assert "remote programs need --allow-remote" in result.error


def test_a_fetched_program_is_checked_and_reads_no_local_file(
    registry: Registry, tmp_path: Path
) -> None:
    registry.serve("/eve/bad", "let x = session: nobody\n")
    registry.serve("/eve/sneaky", 'use "./secret" as secret\nlet s = secret()\n')
    (tmp_path / "secret.prose").write_text(HELLO, encoding="utf-8")
    loader = RemoteLoader(registry.env())
    bad = _run_main(tmp_path, 'use "eve/bad" as bad\nlet b = bad()\n', loader)
    assert bad.status == "error" and "/eve/bad:1 has errors" in bad.error
    sneaky = _run_main(tmp_path, 'use "eve/sneaky" as s\nlet b = s()\n', loader)
    assert sneaky.status == "error"
    assert "a remote program imports only remote ones" in sneaky.error


# --------------------------------------------------------------------------- prose run


def _prose(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    environment.update(PYTHONIOENCODING="utf-8", **env)
    return subprocess.run(
        [sys.executable, "-m", "openprose", *args],
        cwd=cwd, capture_output=True, text=True, encoding="utf-8", env=environment, timeout=60,
    )  # fmt: skip


def test_prose_run_a_url_and_a_handle(registry: Registry, tmp_path: Path) -> None:
    url = registry.serve("/files/hello.prose", HELLO)
    registry.serve("/alice/hello", HELLO)
    for target in (url, "alice/hello", "@alice/hello"):
        done = _prose(tmp_path, "run", target, "--allow-remote", "--json", **registry.env())
        assert done.returncode == 0, done.stderr
        run_dir = Path(json.loads(done.stdout)["run_dir"])
        assert (run_dir / "program.prose").read_text(encoding="utf-8") == HELLO
        record = json.loads((run_dir / "source.json").read_text(encoding="utf-8"))
        assert record["source"] == target
        assert record["sha256"] == hashlib.sha256(HELLO.encode()).hexdigest()


def test_prose_run_refusals_exit_2_with_one_line(registry: Registry, tmp_path: Path) -> None:
    registry.serve("/alice/hello", HELLO)
    env = registry.env()
    refused = _prose(tmp_path, "run", "alice/hello", **env)
    assert refused.returncode == 2
    assert refused.stderr == (
        "prose: error: alice/hello is a remote program: run it with --allow-remote "
        "(or allow-remote = true in the run configuration)\n"
    )
    plain = _prose(tmp_path, "run", "http://127.0.0.1:1/a.prose", "--allow-remote", **env)
    assert plain.returncode == 2 and "plain http is refused" in plain.stderr
    missing = _prose(tmp_path, "run", "nobody/nothing", "--allow-remote", **env)
    assert missing.returncode == 2
    assert missing.stderr == (
        f"prose: error: cannot fetch {registry.base}/nobody/nothing: HTTP 404 Not Found\n"
    )
    assert not (tmp_path / ".prose").exists()


def test_configuration_allows_remote_programs(registry: Registry, tmp_path: Path) -> None:
    registry.serve("/alice/hello", HELLO)
    (tmp_path / "prose.toml").write_text("[run]\nallow-remote = true\n", encoding="utf-8")
    done = _prose(tmp_path, "run", "alice/hello", **registry.env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("greeting = [dry run] Say hello")


def test_prose_run_prints_a_fetched_programs_errors(registry: Registry, tmp_path: Path) -> None:
    registry.serve("/eve/bad", "let x = session: nobody\n")
    done = _prose(tmp_path, "run", "eve/bad", "--allow-remote", **registry.env())
    assert done.returncode == 1
    assert done.stderr.startswith(f"{registry.base}/eve/bad:1:")


def test_a_fetched_programs_project_memory_lives_where_it_runs(
    registry: Registry, tmp_path: Path
) -> None:
    advisor = 'agent advisor:\n  persist: project\n  prompt: "Advise"\n\nsession: advisor\n'
    registry.serve("/alice/advisor", advisor + '  prompt: "First advice"\n')
    done = _prose(tmp_path, "run", "alice/advisor", "--allow-remote", **registry.env())
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".prose" / "agents" / "advisor" / "memory.md").is_file()
