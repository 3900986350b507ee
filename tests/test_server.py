"""`tritonlint server`: the real language server over stdio, driven with LSP messages."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import requires
from tritonlint.examples import LAUNCH, submission

pytestmark = requires("pygls")


class Client:
    def __init__(self, cwd) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tritonlint", "server"], cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.next_id = 0

    def send(self, method: str, params: dict, request: bool = False) -> int | None:
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            msg["id"] = self.next_id
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return msg.get("id")

    def read(self) -> dict:
        length = None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise EOFError(self.proc.stderr.read().decode()[-2000:])
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def wait_for(self, method: str | None = None, id: int | None = None) -> dict:
        while True:
            msg = self.read()
            if (method and msg.get("method") == method) or (id is not None and msg.get("id") == id):
                return msg

    def close(self) -> None:
        self.send("shutdown", {}, request=True)
        self.send("exit", {})
        self.proc.wait(timeout=30)


def test_server_publishes_fixes_and_explains(tmp_path):
    path = tmp_path / "impl.py"
    src = submission(LAUNCH.replace("torch.empty_like(x)", 'torch.empty(x.shape, device="cuda", dtype=x.dtype)')
                     .replace("return out", "return out.sum()"))
    path.write_text(src)
    uri = path.as_uri()
    c = Client(tmp_path)
    try:
        rid = c.send("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}, request=True)
        caps = c.wait_for(id=rid)["result"]["capabilities"]
        assert caps["codeActionProvider"] and caps["hoverProvider"]
        c.send("initialized", {})
        c.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": src}})
        diags = c.wait_for("textDocument/publishDiagnostics")["params"]["diagnostics"]
        assert sorted(d["code"] for d in diags) == ["TL003", "TL302"]
        device = next(d for d in diags if d["code"] == "TL302")
        sum_ = next(d for d in diags if d["code"] == "TL003")
        assert device["severity"] == 2 and sum_["severity"] == 1 and sum_["source"] == "tritonlint"

        rid = c.send("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": device["range"],
                                                 "context": {"diagnostics": [device]}}, request=True)
        actions = c.wait_for(id=rid)["result"]
        assert len(actions) == 1 and actions[0]["kind"] == "quickfix"
        edit = actions[0]["edit"]["changes"][uri][0]
        assert edit["newText"] == "x.device"

        rid = c.send("textDocument/hover", {"textDocument": {"uri": uri}, "position": sum_["range"]["start"]}, request=True)
        hover = c.wait_for(id=rid)["result"]
        assert hover["contents"]["value"].startswith("**TL003 torch-compute-in-forward**")

        fixed = src.replace("return out.sum()", "return out").replace('device="cuda"', "device=x.device")
        c.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}]})
        assert c.wait_for("textDocument/publishDiagnostics")["params"]["diagnostics"] == []
    finally:
        c.close()
