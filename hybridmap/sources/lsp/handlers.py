"""What a server asks of us and tells us, and our answers.

Servers do send requests to the client (``workspace/configuration``,
``window/workDoneProgress/create``, ``client/registerCapability``...) and some stall until
they are answered. Each is answered here; a request we do not know gets ``MethodNotFound``
(:mod:`.wire`). hybridmap is read-only: it applies no edit and shows no message. What a server
says (``window/logMessage``, ``showMessage``) goes to the stderr tail and may be its readiness
signal (``ready = "log:PATTERN"``); ``$/progress`` goes to readiness (``ready = "progress"``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lsprotocol import types as T

from .config import ServerConfig
from .launch import expand_install_dir

Handler = Callable[[Any], Any]


class ClientHandlers:
    """The server-to-client methods we take, by name."""

    def __init__(
        self,
        config: ServerConfig,
        root: Path,
        on_progress: Callable[[str, str | None], None],
        on_message: Callable[[str], None],
        on_error_diagnostic: Callable[[str, str], None] | None = None,
        on_status: Callable[[bool, str, str], None] | None = None,
    ) -> None:
        self._config = config
        self._root = root
        self._on_progress = on_progress
        self._on_message = on_message
        self._on_error_diagnostic = on_error_diagnostic
        self._on_status = on_status
        self.requests: dict[str, Handler] = {
            T.WORKSPACE_CONFIGURATION: self._configuration,
            T.WORKSPACE_WORKSPACE_FOLDERS: self._folders,
            T.WORKSPACE_APPLY_EDIT: self._apply_edit,
            T.WINDOW_WORK_DONE_PROGRESS_CREATE: _nothing,
            T.CLIENT_REGISTER_CAPABILITY: _nothing,
            T.CLIENT_UNREGISTER_CAPABILITY: _nothing,
            T.WINDOW_SHOW_MESSAGE_REQUEST: _nothing,  # no action chosen
        }
        self.notifications: dict[str, Handler] = {
            T.PROGRESS: self._progress,
            T.WINDOW_LOG_MESSAGE: self._message,
            T.WINDOW_SHOW_MESSAGE: self._message,
        }
        # rust-analyzer's own status (offered in our experimental capabilities): quiescent once
        # the workspace is loaded and indexed; health "error"/"warning" with its reason.
        self.notifications["experimental/serverStatus"] = self._server_status
        if on_error_diagnostic is not None and config.degraded:
            # Read only for a server whose config says which errors mean "cannot load the
            # project" (clangd: an include it cannot find).
            self.notifications[T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = self._diagnostics
        # Anything else a server tells us (publishDiagnostics, $/typescriptVersion, telemetry...)
        # is dropped: a notification needs no answer.

    def _configuration(self, params: T.ConfigurationParams) -> list[Any]:
        return [self.setting(item.section) for item in params.items]

    def setting(self, section: str | None) -> Any:
        """The config's ``settings`` at a dotted ``section`` (all of them for none), else None."""
        value: Any = expand_install_dir(dict(self._config.settings))
        if not section:
            return value
        for part in section.split("."):
            if not isinstance(value, Mapping) or part not in value:
                return None
            value = value[part]
        return value

    def _folders(self, params: Any) -> list[T.WorkspaceFolder]:
        return [T.WorkspaceFolder(uri=self._root.as_uri(), name=self._root.name)]

    def _apply_edit(self, params: Any) -> T.ApplyWorkspaceEditResult:
        return T.ApplyWorkspaceEditResult(applied=False, failure_reason="hybridmap is read-only")

    def _progress(self, params: T.ProgressParams) -> None:
        value = params.value if isinstance(params.value, dict) else {}
        kind = value.get("kind")
        self._on_progress(str(params.token), kind if isinstance(kind, str) else None)

    def _message(self, params: T.LogMessageParams | T.ShowMessageParams) -> None:
        self._on_message(params.message)

    def _server_status(self, params: Any) -> None:
        if self._on_status is None or not isinstance(params, dict):
            return
        health, message = params.get("health"), params.get("message")
        self._on_status(
            params.get("quiescent") is True,
            health if isinstance(health, str) else "",
            message if isinstance(message, str) else "",
        )

    def _diagnostics(self, params: T.PublishDiagnosticsParams) -> None:
        if self._on_error_diagnostic is None:
            return
        uri = params.uri
        where = uri[len(self._root.as_uri()) + 1 :] if uri.startswith(self._root.as_uri() + "/") else uri
        for diagnostic in params.diagnostics:
            if diagnostic.severity in (None, T.DiagnosticSeverity.Error):
                self._on_error_diagnostic(diagnostic.message, where)


def _nothing(params: Any) -> None:
    return None
