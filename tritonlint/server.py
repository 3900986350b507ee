"""`tritonlint server`: a Language Server (stdio) for editors. Needs the [lsp] extra (pygls).

On open, change and save it publishes the file's findings (the same `check()` the CLI runs, with
the file's own pyproject.toml); a finding with a safe fix offers it as a quick fix; hovering a
finding shows its rule's doc.
"""

from __future__ import annotations

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

import tritonlint
from tritonlint.api import check
from tritonlint.config import ConfigError, PerFile
from tritonlint.rule import ERROR, SAFE

SOURCE = "tritonlint"


def _range(d) -> lsp.Range:  # our positions are 1-based, end exclusive; LSP's are 0-based
    return lsp.Range(lsp.Position(d.line - 1, d.col - 1), lsp.Position(d.end_line - 1, max(d.end_col, d.col) - 1))


class TritonlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("tritonlint", tritonlint.__version__)
        self.reports: dict[str, list] = {}  # uri -> the diagnostics last published
        self.config_for = PerFile(None, False, lambda c: c)

    def lint(self, uri: str) -> None:
        doc = self.workspace.get_text_document(uri)
        try:
            config = self.config_for(doc.path)
        except ConfigError as e:
            self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error, f"tritonlint: {e}"))
            return
        found = check(doc.source, path=doc.path, config=config).diagnostics
        self.reports[uri] = found
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, version=doc.version, diagnostics=[
            lsp.Diagnostic(range=_range(d), message=d.message, source=SOURCE, code=d.code,
                           severity=lsp.DiagnosticSeverity.Error if d.severity == ERROR else lsp.DiagnosticSeverity.Warning)
            for d in found
        ]))


server = TritonlintServer()


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def _opened(ls: TritonlintServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.lint(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def _changed(ls: TritonlintServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.lint(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def _saved(ls: TritonlintServer, params: lsp.DidSaveTextDocumentParams) -> None:
    ls.lint(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
def _fixes(ls: TritonlintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    """Each safe fix of a finding in the asked range, as the positioned edits the JSON carries."""
    uri, want = params.text_document.uri, params.range
    actions = []
    for d in ls.reports.get(uri, []):
        fix = d.fix_json
        if fix is None or fix["applicability"] != SAFE or not _overlaps(_range(d), want):
            continue
        edits = [lsp.TextEdit(range=lsp.Range(lsp.Position(e["line"] - 1, e["col"] - 1), lsp.Position(e["end_line"] - 1, e["end_col"] - 1)),
                              new_text=e["content"]) for e in fix["edits"]]
        actions.append(lsp.CodeAction(title=f"{d.code}: {fix['description']}", kind=lsp.CodeActionKind.QuickFix,
                                      edit=lsp.WorkspaceEdit(changes={uri: edits})))
    return actions


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def _hover(ls: TritonlintServer, params: lsp.HoverParams) -> lsp.Hover | None:
    from tritonlint.registry import rule_by_code

    at = params.position
    for d in ls.reports.get(params.text_document.uri, []):
        r = _range(d)
        if _overlaps(r, lsp.Range(at, at)) and (rule := rule_by_code(d.code)) is not None:
            return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=f"**{d.code} {rule.name}**\n\n{rule.doc()}"), range=r)
    return None


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (b.start.line, b.start.character) <= (a.end.line, a.end.character)


def main() -> int:
    server.start_io()
    return 0
