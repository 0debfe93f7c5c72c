"""``prose-ls``: the OpenProse language server (also ``prose lsp``).

A thin adapter: documents are kept as incrementally parsed ``Document``s, every editor
feature is a plain function of ``openprose.ide`` over an ``Analysis`` snapshot, and this
module only converts positions and types.  Rules it keeps (shared/design/ARCHITECTURE.md):
diagnostics carry the document version, ``[]`` is published when a document becomes clean
and on close, analysis is debounced per document, pull diagnostics are used when the
client supports them, and no internal failure ever reaches the user as a pop-up.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types
from pygls import uris
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

from openprose import __version__
from openprose import server_options as options
from openprose.files import read_text
from openprose.ide.commands import RUN_COMMAND
from openprose.ide.triggers import COMPLETION_TRIGGERS, SIGNATURE_TRIGGERS
from openprose.lsp import convert, state_commands, transport
from openprose.lsp.positions import encoding_name
from openprose.lsp.protocol import ProseProtocol, strict_converter
from openprose.lsp.running import run_in_editor
from openprose.lsp.settings import Settings

if TYPE_CHECKING:
    # Imported on first use: ide/host.py brings the parser and the analysis (~0.1 s), which
    # `initialize` does not need (tests/lsp/test_startup_imports.py).
    from openprose.ide.host import AnalysisHost, OpenDocument

log = logging.getLogger("prose-ls")
# How long an analysis runs before the server answers the messages that came meanwhile.
ANALYSIS_SLICE = 0.02
F = TypeVar("F", bound=Callable[..., Any])


class ProseLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "prose-ls", __version__, protocol_cls=ProseProtocol, converter_factory=strict_converter
        )
        self.settings = Settings()
        # Each open document's diagnostics as last converted for the client, by URI.
        self._converted: dict[str, convert.ConvertedDiagnostics] = {}
        self.workspace_index: Any = None  # ide.symbols.WorkspaceIndex, built on `initialized`
        # The seam for running programs (lsp/running.py; tests may replace it).  While it is
        # None the "Run program" code lens is not shown, and the command explains why.
        self.runner: Callable[[Any, list[Any]], Awaitable[Any]] | None = run_in_editor

    # ------------------------------------------------------------ helpers

    @functools.cached_property
    def documents(self) -> AnalysisHost:
        """The open documents and the caches, made on first use (at the latest on
        `initialized`).  Imported programs open in the editor are read as the editor has
        them, unsaved (the host's overlay)."""
        from openprose.ide.host import AnalysisHost

        return AnalysisHost()

    @property
    def encoding(self) -> str:
        return encoding_name(self.workspace.position_encoding)

    @property
    def pulls_diagnostics(self) -> bool:
        capabilities = self.client_capabilities
        text_document = capabilities.text_document if capabilities else None
        return bool(text_document and text_document.diagnostic)

    def positions(self, doc: OpenDocument) -> convert.Positions:
        return convert.Positions(doc.line_text, self.encoding)

    def positions_for_path(self, path: str | None, doc: OpenDocument) -> convert.Positions:
        """Positions in ``path`` (another file) or, for None, in ``doc``."""
        if path is None:
            return self.positions(doc)
        uri = Path(path).resolve().as_uri()
        other = self.documents.get(uri)
        if other is not None:
            return self.positions(other)
        try:
            lines = read_text(path).splitlines()  # never a FIFO: that would block the server
        except (OSError, UnicodeDecodeError):
            lines = []
        return convert.Positions(lambda n: lines[n] if 0 <= n < len(lines) else "", self.encoding)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Log internal failures instead of showing the user a pop-up; keep serving.
        log.error("internal error (%s): %r", getattr(source, "__name__", source), error)

    def sync_failed(self, uri: str, reason: str) -> None:
        """Our text of ``uri`` may no longer be the editor's: stop serving it (it is treated
        as closed: no diagnostics, empty answers) rather than compute from the wrong text,
        clear its diagnostics, and tell the user once that reopening it mends this."""
        log.warning("%s is out of sync with the editor: %s", uri, reason)
        doc = self.documents.get(uri)
        if doc is not None and doc.pending is not None:
            doc.pending.cancel()
        if not self.documents.lose(uri):
            return  # already lost, and the user already told
        if self.pulls_diagnostics:
            self.diagnostics_changed([])  # asks a client that can be asked to pull again
        else:
            self.clear(uri)
        if doc is not None:
            self.importers_changed(doc.path)
        name = Path(uris.to_fs_path(uri) or uri).name or uri
        self.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Warning,
                message=f"prose-ls lost track of the text of {name} ({reason}). Close and "
                "reopen it to get diagnostics and the other features back.",
            )
        )

    # ------------------------------------------------------------ diagnostics

    def schedule_diagnostics(
        self, doc: OpenDocument, delay: float | None = None, importers: bool = True
    ) -> None:
        """After ``delay`` (the debounce delay by default), unless ``doc`` changes again:
        publish its diagnostics (a pulling client asks for them itself), and check the
        documents importing it again."""
        if doc.pending is not None:
            doc.pending.cancel()
        task = self._publish_later(doc, delay, importers)
        doc.pending = asyncio.get_event_loop().create_task(task)

    async def _publish_later(self, doc: OpenDocument, delay: float | None, importers: bool) -> None:
        version = doc.version
        await asyncio.sleep(self.settings.debounce if delay is None else delay)
        if not self._still_current(doc, version):
            return  # changed again or closed meanwhile
        if not self.pulls_diagnostics:
            if not await self._analysed(doc, version):
                return  # an edit or a close gave up this version's analysis
            self.publish(doc)
        if importers:
            self.importers_changed(doc.path)

    async def _analysed(self, doc: OpenDocument, version: int | None) -> bool:
        """Analyse ``doc`` in slices of about ``ANALYSIS_SLICE`` seconds, answering the other
        messages between them (requests for other documents, an edit of this one that makes
        the analysis stale: it is then given up). Whether it finished for ``version``."""
        try:
            steps = doc.analysis_steps()
        except Exception:  # the publish that follows logs it and publishes nothing
            return True
        deadline = time.perf_counter() + ANALYSIS_SLICE
        while True:
            try:
                next(steps)
            except StopIteration:
                break
            except Exception:
                log.exception("analysing %s failed", doc.uri)
                return False
            if time.perf_counter() > deadline:
                await asyncio.sleep(0)
                if not self._still_current(doc, version):
                    return False
                deadline = time.perf_counter() + ANALYSIS_SLICE
        return self._still_current(doc, version)

    def _still_current(self, doc: OpenDocument, version: int | None) -> bool:
        """Whether ``doc`` is still open and still at ``version``."""
        return self.documents.get(doc.uri) is doc and doc.version == version

    def publish(self, doc: OpenDocument) -> None:
        protocol = self.protocol
        assert isinstance(protocol, ProseProtocol)
        try:
            self.lsp_diagnostics(doc)
            converted = self._converted[doc.uri]
            body = converted.publication(doc.uri, doc.version, protocol._converter.unstructure)
        except Exception as error:  # never let a checker failure stop the server
            log.exception("diagnostics failed for %s: %r", doc.uri, error)
            return
        protocol.send_json(body)

    def lsp_diagnostics(self, doc: OpenDocument) -> list[types.Diagnostic]:
        config = self.settings.config_for(doc.path)
        # The same analysis serves the requests that follow (one model per version).
        found = doc.analysis().diagnostics_with(config)
        doc.published = (doc.version, found)
        positions = self.positions(doc)
        converted = self._converted.setdefault(doc.uri, convert.ConvertedDiagnostics())
        return converted.convert(
            found, positions, doc.uri, self.settings.docs_url, doc.text.isascii()
        )

    def rules_changed(self) -> None:
        """The settings that choose the rules changed: every open document's diagnostics may
        have."""
        self.documents.configuration_changed()
        self.diagnostics_changed(self.documents.all())

    def importers_changed(self, path: Path | None) -> None:
        """The program at ``path`` changed (in the editor, on disk, or it was closed and its
        unsaved text dropped): the open documents whose diagnostics depended on it are
        analysed again and their diagnostics published or refreshed."""
        if path is None:
            return
        importers = self.documents.file_changed(path)
        if importers:
            self.diagnostics_changed(importers)

    def diagnostics_changed(self, docs: list[OpenDocument]) -> None:
        """Push the diagnostics of ``docs`` again; a pulling client keeps its last results
        until told to ask again (when it can be told: ``workspace/diagnostic/refresh``)."""
        if not self.pulls_diagnostics:
            for doc in docs:
                self.publish(doc)
            return
        capabilities = self.client_capabilities
        workspace = capabilities.workspace if capabilities else None
        diagnostics = workspace.diagnostics if workspace else None
        if diagnostics and diagnostics.refresh_support:
            self.workspace_diagnostic_refresh(None)

    def clear(self, uri: str) -> None:
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[], version=None)
        )

    # ------------------------------------------------------------ workspace index

    async def index_workspace(self) -> None:
        from openprose.ide.symbols import WorkspaceIndex

        index = WorkspaceIndex()
        self.workspace_index = index
        found = [uris.to_fs_path(f.uri) for f in (self.workspace.folders or {}).values()]
        if not found and self.workspace.root_path:
            found = [self.workspace.root_path]
        roots: list[str] = [r for r in found if r is not None and os.path.isdir(r)]
        if not roots:
            return
        token = str(uuid.uuid4())
        window = self.client_capabilities.window if self.client_capabilities else None
        progress = bool(window and window.work_done_progress)
        if progress:  # the client shows server-initiated progress (else it is not asked)
            try:
                await self.work_done_progress.create_async(token)
            except Exception:
                progress = False
        if progress:
            self.work_done_progress.begin(
                token, types.WorkDoneProgressBegin(title="Indexing .prose files", percentage=0)
            )
        loop = asyncio.get_running_loop()

        def report(done: int, total: int) -> None:
            if progress and total:
                value = types.WorkDoneProgressReport(
                    message=f"{done}/{total}", percentage=int(done * 100 / total)
                )
                loop.call_soon_threadsafe(self.work_done_progress.report, token, value)

        try:
            for root in roots:
                await asyncio.to_thread(index.index_directory, root, report)
        finally:
            if progress:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="Indexed"))


server = ProseLanguageServer()


def safe(default: Callable[[], Any]) -> Callable[[F], F]:
    """Log a failing handler and answer with an empty result instead of an error pop-up."""

    def wrap(handler: F) -> F:
        if asyncio.iscoroutinefunction(handler):
            # Still a coroutine function, or pygls would not run it as a task.
            @functools.wraps(handler)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await handler(*args, **kwargs)
                except Exception:
                    log.exception("%s failed", handler.__name__)
                    return default()

            return run_async  # type: ignore[return-value]

        @functools.wraps(handler)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return handler(*args, **kwargs)
            except Exception:
                log.exception("%s failed", handler.__name__)
                return default()

        return run  # type: ignore[return-value]

    return wrap


def _document(ls: ProseLanguageServer, uri: str) -> OpenDocument | None:
    return ls.documents.get(uri)


def _path(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None
    path = uris.to_fs_path(uri)
    return Path(path) if path else None


# ---------------------------------------------------------------- lifecycle


@server.feature(types.INITIALIZE)
def initialize(ls: ProseLanguageServer, params: types.InitializeParams) -> None:
    options = params.initialization_options
    if isinstance(options, dict):
        ls.settings.update(options.get("prose", options))


@server.feature(types.INITIALIZED)
def initialized(ls: ProseLanguageServer, params: types.InitializedParams) -> None:
    # Now that `initialize` is answered: the analysis is imported and the overlay installed
    # before the workspace is indexed and before the first document arrives.
    ls.documents.all()
    asyncio.get_event_loop().create_task(_after_initialized(ls))


async def _after_initialized(ls: ProseLanguageServer) -> None:
    await _refresh_settings(ls)
    _tell_settings_problems(ls)
    try:
        await ls.index_workspace()
    except Exception:
        log.exception("workspace indexing failed")


async def _refresh_settings(ls: ProseLanguageServer) -> None:
    capabilities = ls.client_capabilities
    workspace = capabilities.workspace if capabilities else None
    if not (workspace and workspace.configuration):
        return
    try:
        result = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="prose")])
        )
    except Exception:
        log.exception("workspace/configuration failed")
        return
    if result and isinstance(result[0], dict):
        ls.settings.update(result[0])


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(
    ls: ProseLanguageServer, params: types.DidChangeConfigurationParams
) -> None:
    settings = params.settings
    run_cost_hints = ls.settings.run_cost_hints
    if isinstance(settings, dict) and isinstance(settings.get("prose"), dict):
        ls.settings.update(settings["prose"])
    else:
        await _refresh_settings(ls)
    _tell_settings_problems(ls)
    ls.rules_changed()
    if ls.settings.run_cost_hints != run_cost_hints:
        _inlay_hints_changed(ls)


def _inlay_hints_changed(ls: ProseLanguageServer) -> None:
    """Ask the client for the inlay hints again, when it can be asked: it would otherwise
    keep showing the ones it has until the next edit."""
    capabilities = ls.client_capabilities
    workspace = capabilities.workspace if capabilities else None
    if workspace and workspace.inlay_hint and workspace.inlay_hint.refresh_support:
        ls.workspace_inlay_hint_refresh(None)


def _tell_settings_problems(ls: ProseLanguageServer) -> None:
    """A rejected setting is shown to the user, not only logged: otherwise the rules would
    silently differ from what they configured."""
    for problem in ls.settings.problems:
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=problem)
        )
    ls.settings.problems.clear()


# ---------------------------------------------------------------- synchronisation


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: ProseLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    item = params.text_document
    doc = ls.documents.open(item.uri, item.text, item.version, _path(item.uri))
    if not ls.pulls_diagnostics:
        # At once (nothing to debounce yet), in slices: a large document must not hold up
        # the other requests.
        ls.schedule_diagnostics(doc, delay=0, importers=False)
    ls.importers_changed(doc.path)  # its text in the editor now stands for the file


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: ProseLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    doc = ls.documents.get(uri)
    if doc is None:
        if not ls.documents.is_lost(uri):
            log.info("ignored a change to %s, which is not open", uri)
        return
    try:
        for change in params.content_changes:
            if isinstance(change, types.TextDocumentContentChangePartial):
                positions = ls.positions(doc)
                start = positions.from_client(change.range.start)
                end = positions.from_client(change.range.end)
                doc.apply_edit(start, end, change.text)
            else:
                doc.replace(change.text)
    except Exception:
        log.exception("applying a change to %s failed", uri)
        ls.sync_failed(uri, "a change could not be applied")
        return
    doc.version = params.text_document.version
    ls.schedule_diagnostics(doc)


def _reindex(ls: ProseLanguageServer, doc: OpenDocument) -> None:
    """Refresh the workspace symbols of a file the editor saved or closed (not on every
    keystroke: that would cost a tree walk per key)."""
    if ls.workspace_index is not None and doc.path is not None:
        try:
            ls.workspace_index.update_module(str(doc.path), doc.document.module)
        except Exception:
            log.exception("indexing %s failed", doc.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: ProseLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.settings.clear_file_configs()  # a saved prose.toml may have changed the rules
    doc = ls.documents.get(params.text_document.uri)
    if doc is not None:
        _reindex(ls, doc)
        ls.importers_changed(doc.path)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: ProseLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    doc = ls.documents.close(params.text_document.uri)
    ls._converted.pop(params.text_document.uri, None)
    if doc is not None:
        if doc.pending is not None:
            doc.pending.cancel()
        _reindex(ls, doc)
        ls.importers_changed(doc.path)  # its unsaved text is gone: the file stands again
    if not ls.pulls_diagnostics:
        ls.clear(params.text_document.uri)


@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(
        identifier="openprose", inter_file_dependencies=True, workspace_diagnostics=False
    ),
)
def pull_diagnostics(
    ls: ProseLanguageServer, params: types.DocumentDiagnosticParams
) -> types.DocumentDiagnosticReport:
    doc = ls.documents.get(params.text_document.uri)
    if doc is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    try:
        items = ls.lsp_diagnostics(doc)
    except Exception:
        log.exception("pull diagnostics failed")
        items = []
    return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=str(doc.version))


# ---------------------------------------------------------------- language features


@server.feature(
    types.TEXT_DOCUMENT_COMPLETION,
    types.CompletionOptions(trigger_characters=list(COMPLETION_TRIGGERS)),
)
@safe(lambda: types.CompletionList(is_incomplete=False, items=[]))
def completion(ls: ProseLanguageServer, params: types.CompletionParams) -> types.CompletionList:
    from openprose.ide.completion import completion as complete

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return types.CompletionList(is_incomplete=False, items=[])
    positions = ls.positions(doc)
    items = complete(doc.analysis(), positions.from_client(params.position))
    return types.CompletionList(
        is_incomplete=False, items=[convert.completion_item(i, positions) for i in items]
    )


@server.feature(types.TEXT_DOCUMENT_HOVER)
@safe(lambda: None)
def hover(ls: ProseLanguageServer, params: types.HoverParams) -> types.Hover | None:
    from openprose.ide.hover import hover as describe
    from openprose.lsp import run_costs

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return None
    positions = ls.positions(doc)
    analysis = doc.analysis()
    position = positions.from_client(params.position)
    found = describe(analysis, position)
    if found is None:
        return None
    contents = found.contents
    section = run_costs.hover_text(analysis, position)  # never raises
    if section:
        contents = f"{contents}\n\n---\n\n{section}"
    return types.Hover(contents=convert.markdown(contents), range=positions.range(found.range))


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
@safe(list)
def definition(ls: ProseLanguageServer, params: types.DefinitionParams) -> list[types.Location]:
    from openprose.ide.definition import definition as find

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return []
    positions = ls.positions(doc)
    found = find(doc.analysis(), positions.from_client(params.position))
    return [convert.location(f, doc.uri, lambda p: ls.positions_for_path(p, doc)) for f in found]


@server.feature(types.TEXT_DOCUMENT_REFERENCES)
@safe(list)
def references(ls: ProseLanguageServer, params: types.ReferenceParams) -> list[types.Location]:
    from openprose.ide.references import references as find

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return []
    positions = ls.positions(doc)
    found = find(
        doc.analysis(), positions.from_client(params.position), params.context.include_declaration
    )
    return [convert.location(f, doc.uri, lambda p: ls.positions_for_path(p, doc)) for f in found]


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
@safe(list)
def document_highlight(
    ls: ProseLanguageServer, params: types.DocumentHighlightParams
) -> list[types.DocumentHighlight]:
    from openprose.ide.highlights import highlights

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return []
    positions = ls.positions(doc)
    return [
        types.DocumentHighlight(range=positions.range(h.range), kind=convert.HIGHLIGHT_KIND[h.kind])
        for h in highlights(doc.analysis(), positions.from_client(params.position))
    ]


@server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
def prepare_rename(
    ls: ProseLanguageServer, params: types.PrepareRenameParams
) -> types.PrepareRenamePlaceholder | None:
    from openprose.ide.rename import prepare_rename as prepare
    from openprose.ide.types import RenameError

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return None
    positions = ls.positions(doc)
    try:
        found = prepare(doc.analysis(), positions.from_client(params.position))
    except Exception:
        log.exception("prepareRename failed")
        return None
    if found is None:
        return None
    if isinstance(found, RenameError):
        # An explanation the client shows ("cannot rename a keyword"), not an internal error.
        raise _UserError(found.message)
    return types.PrepareRenamePlaceholder(
        range=positions.range(found.range), placeholder=found.placeholder
    )


class _UserError(JsonRpcException):
    """Answered as a RequestFailed error, which clients show to the user as a message."""

    CODE = -32803


@server.feature(types.TEXT_DOCUMENT_RENAME)
def rename(ls: ProseLanguageServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
    from openprose.ide.rename import rename as do_rename
    from openprose.ide.types import RenameError

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return None
    positions = ls.positions(doc)
    try:
        # The workspace's programs: renaming an input or output renames it in its callers.
        importers = ls.workspace_index.paths() if ls.workspace_index is not None else []
        found = do_rename(
            doc.analysis(), positions.from_client(params.position), params.new_name, importers
        )
    except Exception:
        log.exception("rename failed")
        return None
    if isinstance(found, RenameError):
        raise _UserError(found.message)
    changes: dict[str, list[types.TextEdit]] = {}
    for path, edits in found.items():
        uri = doc.uri if path is None else Path(path).resolve().as_uri()
        changes[uri] = convert.text_edits(edits, ls.positions_for_path(path, doc))
    return types.WorkspaceEdit(changes=changes)


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
@safe(list)
def document_symbol(
    ls: ProseLanguageServer, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol]:
    from openprose.ide.symbols import document_symbols

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return []
    positions = ls.positions(doc)
    return [convert.document_symbol(s, positions) for s in document_symbols(doc.analysis())]


@server.feature(types.WORKSPACE_SYMBOL)
@safe(list)
def workspace_symbol(
    ls: ProseLanguageServer, params: types.WorkspaceSymbolParams
) -> list[types.WorkspaceSymbol]:
    index = ls.workspace_index
    if index is None:
        return []
    found = []
    for path, symbol in index.symbols(params.query):
        uri = Path(path).resolve().as_uri()
        doc = ls.documents.get(uri)
        positions = ls.positions(doc) if doc is not None else ls.positions_for_path(path, doc)  # type: ignore[arg-type]
        found.append(
            types.WorkspaceSymbol(
                name=symbol.name,
                kind=convert.SYMBOL_KIND.get(symbol.kind, types.SymbolKind.Object),
                location=types.Location(uri=uri, range=positions.range(symbol.selection_range)),
                container_name=symbol.detail or None,
            )
        )
    return found


@server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)
@safe(list)
def folding_range(
    ls: ProseLanguageServer, params: types.FoldingRangeParams
) -> list[types.FoldingRange]:
    from openprose.ide.folding import folding_ranges

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return []
    return [
        types.FoldingRange(
            start_line=f.start_line,
            end_line=f.end_line,
            kind=convert.FOLDING_KIND.get(f.kind) if f.kind else None,
        )
        for f in folding_ranges(doc.analysis())
    ]


@server.feature(types.TEXT_DOCUMENT_SELECTION_RANGE)
@safe(list)
def selection_range(
    ls: ProseLanguageServer, params: types.SelectionRangeParams
) -> list[types.SelectionRange]:
    from openprose.ide.selection import selection_ranges

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return []
    positions = ls.positions(doc)
    chains = selection_ranges(doc.analysis(), [positions.from_client(p) for p in params.positions])
    return [convert.selection(c, positions) for c in chains if c.ranges]


def _legend() -> types.SemanticTokensLegend:
    return types.SemanticTokensLegend(
        token_types=convert.LEGEND_TYPES, token_modifiers=convert.LEGEND_MODIFIERS
    )


@server.feature(
    types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL,
    types.SemanticTokensRegistrationOptions(legend=_legend(), full=True, range=True),
)
@safe(lambda: types.SemanticTokens(data=[]))
def semantic_tokens_full(
    ls: ProseLanguageServer, params: types.SemanticTokensParams
) -> types.SemanticTokens:
    return _semantic_tokens(ls, params.text_document.uri, None)


@server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE)
@safe(lambda: types.SemanticTokens(data=[]))
def semantic_tokens_range(
    ls: ProseLanguageServer, params: types.SemanticTokensRangeParams
) -> types.SemanticTokens:
    return _semantic_tokens(ls, params.text_document.uri, params.range)


def _semantic_tokens(
    ls: ProseLanguageServer, uri: str, lsp_range: types.Range | None
) -> types.SemanticTokens:
    from openprose.ide.semantic_tokens import semantic_tokens

    doc = _document(ls, uri)
    if doc is None:
        return types.SemanticTokens(data=[])
    positions = ls.positions(doc)
    wanted = positions.from_range(lsp_range) if lsp_range is not None else None
    tokens = semantic_tokens(doc.analysis(), wanted)
    return types.SemanticTokens(
        data=convert.semantic_tokens(tokens, positions, convert.LEGEND_TYPES)
    )


@server.feature(types.TEXT_DOCUMENT_FORMATTING)
@safe(list)
async def formatting(
    ls: ProseLanguageServer, params: types.DocumentFormattingParams
) -> list[types.TextEdit]:
    from openprose.format import TextEdit, format_edits, format_text
    from openprose.lsp.large import large_documents, off_the_loop

    doc = _document(ls, params.text_document.uri)
    if doc is None or not ls.settings.format_enabled:
        return []
    if large_documents.too_large(ls, doc, "formatting"):
        return []

    def compute(text: str) -> tuple[list[TextEdit], str | None]:
        # From the text, not the open document's tree: edits change that tree in place.
        result = format_text(text)
        return format_edits(text, result), result.refused

    found = await off_the_loop(ls, doc, compute)
    if found is None:
        return []
    edits, refused = found
    if refused:
        log.warning("%s: %s", doc.uri, refused)
    return convert.text_edits(edits, ls.positions(doc))


@server.feature(types.TEXT_DOCUMENT_RANGE_FORMATTING)
@safe(list)
async def range_formatting(
    ls: ProseLanguageServer, params: types.DocumentRangeFormattingParams
) -> list[types.TextEdit]:
    from openprose.format import format_range
    from openprose.lsp.large import large_documents, off_the_loop

    doc = _document(ls, params.text_document.uri)
    if doc is None or not ls.settings.format_enabled:
        return []
    if large_documents.too_large(ls, doc, "range formatting"):
        return []
    first, last = params.range.start.line, params.range.end.line
    edits = await off_the_loop(ls, doc, lambda text: format_range(text, first, last))
    return convert.text_edits(edits or [], ls.positions(doc))


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll],
        resolve_provider=False,
    ),
)
@safe(list)
def code_action(ls: ProseLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    from openprose.ide.fixes.fix_all import fix_all
    from openprose.ide.fixes.registry import code_actions
    from openprose.lsp.large import large_documents

    doc = _document(ls, params.text_document.uri)
    if doc is None or large_documents.too_large(ls, doc, "code actions"):
        return []
    positions = ls.positions(doc)
    analysis = doc.analysis()
    # The rules the diagnostics were reported under: an ignored code gets no fix either.
    config = ls.settings.config_for(doc.path)
    # The diagnostics the client shows at the range (ours only); without any, our own.
    sent = [convert.from_client_diagnostic(d, positions) for d in params.context.diagnostics]
    shown_here = [d for d in sent if d is not None]
    wanted = params.context.only
    actions = []
    if not wanted or any(k.startswith(types.CodeActionKind.QuickFix) for k in wanted):
        actions += code_actions(
            analysis, positions.from_range(params.range), shown_here or None, config
        )
    if not wanted or any(
        types.CodeActionKind.SourceFixAll.startswith(k) or k.startswith("source") for k in wanted
    ):
        actions += fix_all(analysis, config)
    shown = {d.code: d for d in params.context.diagnostics if isinstance(d.code, str)}
    return [
        types.CodeAction(
            title=a.title,
            kind=types.CodeActionKind.SourceFixAll
            if a.kind == "source.fixAll"
            else types.CodeActionKind.QuickFix,
            diagnostics=[shown[c] for c in a.diagnostic_codes if c in shown] or None,
            is_preferred=a.preferred or None,
            edit=types.WorkspaceEdit(changes={doc.uri: convert.text_edits(a.edits, positions)}),
        )
        for a in actions
    ]


@server.feature(
    types.TEXT_DOCUMENT_SIGNATURE_HELP,
    types.SignatureHelpOptions(trigger_characters=list(SIGNATURE_TRIGGERS)),
)
@safe(lambda: None)
def signature_help(
    ls: ProseLanguageServer, params: types.SignatureHelpParams
) -> types.SignatureHelp | None:
    from openprose.ide.signature import signature_help as find

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return None
    found = find(doc.analysis(), ls.positions(doc).from_client(params.position))
    if found is None:
        return None
    return types.SignatureHelp(
        signatures=[
            types.SignatureInformation(
                label=found.label,
                documentation=convert.markdown(found.documentation)
                if found.documentation
                else None,
                parameters=[types.ParameterInformation(label=p) for p in found.parameters],
            )
        ],
        active_signature=0,
        active_parameter=found.active_parameter,
    )


@server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
@safe(list)
def inlay_hint(ls: ProseLanguageServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    from openprose.ide.inlay import inlay_hints
    from openprose.lsp import run_costs

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return []
    positions = ls.positions(doc)
    analysis = doc.analysis()
    wanted = positions.from_range(params.range)
    found = [
        types.InlayHint(
            position=positions.to_client(h.position),
            label=h.label,
            kind=types.InlayHintKind.Parameter,
            padding_right=True,
        )
        for h in inlay_hints(analysis, wanted)
    ]
    if ls.settings.run_cost_hints:
        found += [
            types.InlayHint(
                position=positions.to_client(h.position),
                label=h.label,
                tooltip=h.tooltip,
                padding_left=True,
            )
            for h in run_costs.hints(analysis, wanted)  # never raises
        ]
    return found


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)
@safe(list)
def document_link(
    ls: ProseLanguageServer, params: types.DocumentLinkParams
) -> list[types.DocumentLink]:
    from openprose.ide.links import document_links

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return []
    positions = ls.positions(doc)
    capabilities = ls.client_capabilities
    text_document = capabilities.text_document if capabilities else None
    links = text_document.document_link if text_document else None
    # A tooltip only where the client says it shows one (LSP 3.15 `tooltipSupport`).
    tooltips = bool(links and links.tooltip_support)
    return [
        types.DocumentLink(
            range=positions.range(link.range),
            target=Path(link.target).as_uri(),
            tooltip=(link.tooltip or None) if tooltips else None,
        )
        for link in document_links(doc.analysis())
    ]


@server.feature(types.TEXT_DOCUMENT_CODE_LENS)
@safe(list)
def code_lens(ls: ProseLanguageServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    from openprose.ide.lens import code_lenses

    doc = _document(ls, params.text_document.uri)
    if doc is None:
        return []
    positions = ls.positions(doc)
    return [
        types.CodeLens(
            range=positions.range(lens.range),
            command=types.Command(
                title=lens.title, command=lens.command, arguments=list(lens.arguments)
            ),
        )
        for lens in code_lenses(
            doc.analysis(),
            runnable=ls.runner is not None,
            diagnostics=doc.analysis().diagnostics_with(ls.settings.config_for(doc.path)),
            client_runs=ls.settings.client_runs,
            uri=doc.uri,
        )
    ]


@server.command(RUN_COMMAND)
async def run_program(ls: ProseLanguageServer, *arguments: Any) -> Any:
    """``prose.run URI [INPUTS]``: run a program through the VM (lsp/running.py), as an
    asyncio task: other requests are answered meanwhile."""
    if ls.runner is None:
        ls.window_show_message(
            types.ShowMessageParams(
                type=types.MessageType.Info,
                message="Running programs needs the OpenProse VM, which is not available.",
            )
        )
        return None
    return await ls.runner(ls, list(arguments))


# prose.runs.list and prose.state.describe|reset|compact (lsp/state_commands.py).
state_commands.register(server)


def _not_a_late_cancel(record: logging.LogRecord) -> bool:
    """Editors cancel requests whose answers are already on the way (VS Code does it on most
    keystrokes); pygls warns about each one, which fills the user's output channel with noise."""
    return not str(record.msg).startswith("Cancel notification for unknown message id")


def main(argv: list[str] | None = None) -> int:
    """Serve until the client's ``exit``; the exit status (1 if it came without
    ``shutdown``, or the client went away without either)."""
    parser = argparse.ArgumentParser(prog="prose-ls", description=options.DESCRIPTION)
    options.add_arguments(parser, "prose-ls")
    return serve(parser.parse_args(argv))


def serve(args: argparse.Namespace) -> int:
    """``main`` after parsing: also what ``prose lsp`` calls with the same options."""
    logging.basicConfig(level=getattr(logging, args.log_level, logging.WARNING))
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_not_a_late_cancel)
    protocol = server.protocol
    assert isinstance(protocol, ProseProtocol)
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        return transport.serve_tcp(protocol, host or "127.0.0.1", int(port))
    return transport.serve_stdio(protocol)
