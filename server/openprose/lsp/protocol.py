"""The JSON-RPC side of prose-ls: pygls' protocol, with the rules it does not keep.

- Every request is answered: params that do not fit the method's type get InvalidParams,
  an unknown method MethodNotFound, a request before ``initialize`` ServerNotInitialized
  (-32002), one after ``shutdown`` InvalidRequest; pygls would log a traceback and never
  answer the first kind.
- Document synchronisation is ours alone: pygls' workspace copy of each document is not
  kept, because keeping it rewrites the client's edit ranges in place (clamping them to
  lines it splits at characters LSP does not break lines at) before our handler sees them.
  A ``didOpen``/``didChange`` whose params cannot be read is reported to the server
  (``sync_failed``), which stops trusting its copy of that document.
- A refusal the client should show (a rename that cannot be done) or a client's mistake is
  logged in one line, not as an internal error with a traceback.
- ``exit`` records the exit status (1 without ``shutdown`` first) and stops the transport.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Generator
from concurrent.futures import Future
from typing import Any, Protocol, cast

import cattrs
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method

from openprose.lsp.framing import Event, Garbled

log = logging.getLogger("prose-ls")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
# Errors that answer a request as designed (the client shows or ignores them): not failures.
_EXPECTED = frozenset(
    (
        INVALID_PARAMS,
        int(types.LSPErrorCodes.RequestFailed),
        int(types.LSPErrorCodes.ContentModified),
        int(types.LSPErrorCodes.RequestCancelled),
        int(types.LSPErrorCodes.ServerCancelled),
    )
)
_SYNC = frozenset((types.TEXT_DOCUMENT_DID_OPEN, types.TEXT_DOCUMENT_DID_CHANGE))


class _SyncOwner(Protocol):
    def sync_failed(self, uri: str, reason: str) -> None: ...


# pygls leaves its factory unannotated; it returns lsprotocol's cattrs converter.
_pygls_converter: Callable[[], cattrs.Converter] = default_converter


def strict_converter() -> cattrs.Converter:
    """pygls' converter, except that a value of the wrong JSON type is refused instead of
    converted (cattrs would take the number 5 for the URI "5", "3" for a line number)."""
    converter = _pygls_converter()

    # Registered for str and int, these also receive their subclasses, the enums of
    # lsprotocol that have no hook of their own (DiagnosticSeverity...): build those.
    def string(value: Any, kind: type) -> Any:
        if not isinstance(value, str):
            raise TypeError(f"expected a string, got {type(value).__name__}")
        return value if kind is str else kind(value)

    def integer(value: Any, kind: type) -> Any:
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"expected an integer, got {type(value).__name__}")
        return value if kind is int else kind(value)

    def boolean(value: Any, _: type) -> bool:
        if not isinstance(value, bool):
            raise TypeError(f"expected true or false, got {type(value).__name__}")
        return value

    converter.register_structure_hook(str, string)
    converter.register_structure_hook(int, integer)
    converter.register_structure_hook(bool, boolean)  # or bool would take the int hook
    return converter


def _uri_of(params: Any) -> str | None:
    document = params.get("textDocument") if isinstance(params, dict) else None
    uri = document.get("uri") if isinstance(document, dict) else None
    return uri if isinstance(uri, str) else None


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    # A plain dict: lsprotocol's types would leave out `"id": null`, which JSON-RPC needs.
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _answer_of(data: Any) -> tuple[bool, Any]:
    """Whether ``data`` answers a request, and its id."""
    if isinstance(data, dict):
        return "result" in data, data.get("id")
    return hasattr(data, "result") and hasattr(data, "id"), getattr(data, "id", None)


def _problem(error: BaseException) -> str:
    """A one-line account of why params did not fit (cattrs nests the causes)."""
    causes = getattr(error, "exceptions", None)
    if causes:
        note = getattr(causes[0], "__notes__", None)
        where = f" ({note[0]})" if note else ""
        return _problem(causes[0]) + where
    return str(error) or type(error).__name__


class ProseProtocol(LanguageServerProtocol):
    """Fed decoded messages by ``openprose.lsp.transport``, not by pygls' reader."""

    def __init__(self, server: Any, converter: cattrs.Converter) -> None:
        super().__init__(server, converter)
        self.initialize_received = False
        self.exit_status: int | None = None  # set by `exit`: the transport stops

    @property
    def shut_down(self) -> bool:
        """Whether the client sent ``shutdown``."""
        return self._shutdown

    # ------------------------------------------------------------ receiving

    def receive(self, event: Event) -> None:
        if isinstance(event, Garbled):
            log.warning("ignored %d bytes from the client: %s", event.size, event.reason)
            self._reply_error(None, PARSE_ERROR, f"Parse error: {event.reason}")
            return
        try:
            self._dispatch(event.value)
        except Exception:
            log.exception("failed to handle a message")

    def _dispatch(self, data: Any) -> None:
        if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            self._reply_error(None, INVALID_REQUEST, "Not a JSON-RPC 2.0 message")
            return
        method = data.get("method")
        if method is None:
            if "id" in data and ("result" in data or "error" in data):
                self.handle_message(self.structure_message(data))  # a response to us
            else:
                self._reply_error(data.get("id"), INVALID_REQUEST, "Not a request or response")
            return
        if not isinstance(method, str):
            self._reply_error(data.get("id"), INVALID_REQUEST, "The method is not a string")
        elif "id" in data:
            self._request(data, method)
        else:
            self._notification(data, method)

    def _request(self, data: dict[str, Any], method: str) -> None:
        msg_id = data["id"]
        if not isinstance(msg_id, int | str) or isinstance(msg_id, bool):
            self._reply_error(None, INVALID_REQUEST, "A request id must be a number or a string")
            return
        if not self.initialize_received and method != types.INITIALIZE:
            self._reply_error(msg_id, SERVER_NOT_INITIALIZED, "The server is not initialized")
            return
        if self._shutdown:
            self._reply_error(msg_id, INVALID_REQUEST, "The server is shutting down")
            return
        if not self._handles(method):
            log.info("unknown request %r", method)
            self._reply_error(msg_id, METHOD_NOT_FOUND, f"Unknown method: {method}")
            return
        try:
            message = self._structure(data, method)
        except Exception as error:
            log.warning("invalid params for %s: %s", method, _problem(error))
            self._reply_error(msg_id, INVALID_PARAMS, f"Invalid params: {_problem(error)}")
            return
        if method == types.INITIALIZE:
            self.initialize_received = True
        self.handle_message(message)

    def _notification(self, data: dict[str, Any], method: str) -> None:
        if method != types.EXIT and (not self.initialize_received or self._shutdown):
            log.info("dropped %s: the server is not running", method)
            return
        if not self._handles(method) and method != types.CANCEL_REQUEST:
            log.debug("ignored unknown notification %r", method)
            return
        try:
            message = self._structure(data, method)
        except Exception as error:
            log.warning("invalid params for %s: %s", method, _problem(error))
            uri = _uri_of(data.get("params"))
            if method in _SYNC and uri is not None:
                cast(_SyncOwner, self._server).sync_failed(uri, f"its {method} could not be read")
            return
        self.handle_message(message)

    def _handles(self, method: str) -> bool:
        return method in self.fm.features or method in self.fm.builtin_features

    def _structure(self, data: dict[str, Any], method: str) -> Any:
        kind = self.get_message_type(method)
        if kind is None:
            return self.structure_message(data)
        return self._converter.structure(data, kind)

    def _reply_error(self, msg_id: Any, code: int, message: str) -> None:
        self._send_data(_error(msg_id, code, message))

    # ------------------------------------------------------------ answering

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: Any = None,
        kwargs: Any = None,
    ) -> None:
        # pygls files the future of every generator or async handler under its message id
        # so that a $/cancelRequest can find it, but only a request's answer removes it:
        # a notification (every didChange, under a fresh uuid) and each step of a builtin
        # handler stayed in `_request_futures` for ever, 2-3 KB a keystroke.  Forget a
        # future once it is done; a request's own entry is popped by its answer as before.
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is not None:
            future.add_done_callback(lambda done: self._forget(msg_id, done))

    def _forget(self, msg_id: Any, future: Any) -> None:
        if self._request_futures.get(msg_id) is future:
            del self._request_futures[msg_id]

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        error = None if future.cancelled() else future.exception()
        if isinstance(error, JsonRpcException) and error.code in _EXPECTED:
            self._request_futures.pop(msg_id, None)
            log.info("request %s answered with an error: %s", msg_id, error.message)
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def send_json(self, body: str) -> None:
        """Send a message already serialised (the diagnostics of a document, whose parts
        are serialised once each, not on every publication)."""
        if self.writer is None:
            log.error("no connection to send a message on")
            return
        self._write(body)

    def _write(self, body: str) -> None:
        header = (
            f"Content-Length: {len(body.encode(self.CHARSET))}\r\n"
            f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
        )
        # Our transports' writers (stdout, a TCP stream) write at once: nothing to await.
        assert self.writer is not None
        self.writer.write((header + body).encode(self.CHARSET))

    def _send_data(self, data: Any) -> None:
        # pygls' own, except that an answer that cannot be serialised becomes an error
        # answer (pygls logged it and sent nothing: the request was never answered).
        if not data:
            return
        if self.writer is None:
            log.error("no connection to send a message on")
            return
        try:
            body = json.dumps(data, default=self._serialize_message)
        except Exception:
            log.exception("a message to the client could not be serialised")
            answers, msg_id = _answer_of(data)
            if not answers:
                return
            body = json.dumps(_error(msg_id, INTERNAL_ERROR, "Internal error: see the log"))
        self._write(body)

    # ------------------------------------------------------------ lifecycle and sync

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Generator[Any, Any, None]:
        # pygls' own closes standard output and calls sys.exit(), which its loop swallowed
        # (every exit was 0); the transport stops on this and main() returns the status.
        self.exit_status = 0 if self._shutdown else 1
        yield from ()

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> Any:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> Any:
        if (handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None
