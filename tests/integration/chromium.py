"""A real headless Chromium for the tests, driven over the DevTools protocol.

``scripts/test.sh`` installs Debian's ``chromium`` when it is missing; where it
cannot be installed the tests that need it are skipped, saying why.  The
protocol runs over ``--remote-debugging-pipe`` (file descriptors 3 and 4,
NUL-separated JSON), so no websocket client or other dependency is needed.
Sandboxed iframes run in their own renderer (out-of-process frames): they are
reached through auto-attached sessions, one per frame.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Any

import pytest

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
    "--disable-extensions", "--mute-audio",
)  # fmt: skip


def find_chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        binary = shutil.which(name)
        if binary:
            return binary
    pytest.skip("chromium is not installed (scripts/test.sh installs it: apt-get install chromium)")


class Chromium:
    """One headless browser with one tab; ``open(url)`` loads a page and its frames."""

    def __init__(self, width: int = 1280, height: int = 900, timeout: float = 60.0) -> None:
        binary = find_chromium()
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="detemplate-chromium-")
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()

        def pipes_on_3_and_4() -> None:  # in the child, before exec
            read, write = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(read, 3)
            os.dup2(write, 4)

        args = [binary, *FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}"]
        self.proc = subprocess.Popen(
            [*args, "--remote-debugging-pipe", "about:blank"],
            preexec_fn=pipes_on_3_and_4, close_fds=False,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._write, self._read_fd = to_chrome_w, from_chrome_r
        self._buffer = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        target = self.send("Target.createTarget", {"url": "about:blank"})
        self.session = self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})[
            "sessionId"
        ]
        self.send("Page.enable", session=self.session)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=self.session,
        )
        self.send(
            "Target.setAutoAttach",
            {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True},
            session=self.session,
        )

    # -- protocol ------------------------------------------------------------

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        self._id += 1
        message: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode("utf-8") + b"\0")
        while True:
            reply = self._next()
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _next(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._read_fd, 1 << 16)
            if not chunk:
                raise EOFError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        result: dict[str, Any] = json.loads(message)
        return result

    def _wait_for(self, done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + self.timeout
        while not done():
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not finish loading")
            self.events.append(self._next())

    # -- pages ---------------------------------------------------------------

    def open(self, url: str) -> None:
        """Load ``url`` in the tab and wait for its load event (frames included)."""
        self.events.clear()
        self.send("Page.navigate", {"url": url}, session=self.session)
        self._wait_for(
            lambda: any(e.get("method") == "Page.loadEventFired" and e.get("sessionId") == self.session
                        for e in self.events)
        )  # fmt: skip
        self.send("Runtime.runIfWaitingForDebugger", session=self.session)

    def frames(self) -> dict[str, str]:
        """The tab's out-of-process frames attached since the last ``open``: document URL -> session."""
        found: dict[str, str] = {}
        for event in self.events:
            if event.get("method") != "Target.attachedToTarget":
                continue
            session = event["params"]["sessionId"]
            if event["params"]["targetInfo"].get("type") != "iframe":
                continue
            self.send("DOM.enable", session=session)
            self.send("CSS.enable", session=session)
            root = self.send("DOM.getDocument", {"depth": -1}, session=session)["root"]
            found[root.get("documentURL", "")] = session
        return found

    def document(self, session: str | None = None) -> dict[str, Any]:
        session = session or self.session
        self.send("DOM.enable", session=session)
        self.send("CSS.enable", session=session)
        root: dict[str, Any] = self.send("DOM.getDocument", {"depth": -1}, session=session)["root"]
        return root

    def select(self, selector: str, session: str | None = None) -> list[int]:
        """Node ids of the elements matching ``selector`` in a frame's document (the tab's by default)."""
        session = session or self.session
        root = self.document(session)
        ids: list[int] = self.send(
            "DOM.querySelectorAll", {"nodeId": root["nodeId"], "selector": selector}, session=session
        )["nodeIds"]
        return ids

    def style(self, node: int, session: str | None = None) -> dict[str, str]:
        """The computed style of a node, as the browser rendered it."""
        computed = self.send("CSS.getComputedStyleForNode", {"nodeId": node}, session=session or self.session)
        return {p["name"]: p["value"] for p in computed["computedStyle"]}

    def html(self, node: int, session: str | None = None) -> str:
        result: str = self.send("DOM.getOuterHTML", {"nodeId": node}, session=session or self.session)["outerHTML"]
        return result

    def click(self, selector: str) -> None:
        """A real mouse click on the middle of the first element matching ``selector``."""
        node = self.select(selector)[0]
        quad = self.send("DOM.getBoxModel", {"nodeId": node}, session=self.session)["model"]["content"]
        x, y = (quad[0] + quad[4]) / 2, (quad[1] + quad[5]) / 2
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
                session=self.session,
            )

    def screenshot(self) -> bytes:
        data = self.send("Page.captureScreenshot", {"format": "png"}, session=self.session)["data"]
        return base64.b64decode(data)

    def close(self) -> None:
        with contextlib.suppress(OSError, EOFError, RuntimeError, TimeoutError):
            self.send("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._write)
        os.close(self._read_fd)
        shutil.rmtree(self.profile, ignore_errors=True)


def main(argv: list[str]) -> int:
    """``python tests/integration/chromium.py URL OUT.png [WIDTH HEIGHT]``: a screenshot once the page has painted."""
    url, out = argv[0], argv[1]
    width, height = (int(argv[2]), int(argv[3])) if len(argv) > 3 else (1280, 800)
    browser = Chromium(width, height)
    try:
        browser.open(url)
        time.sleep(1.5)  # out-of-process frames paint after the load event
        with open(out, "wb") as f:
            f.write(browser.screenshot())
    finally:
        browser.close()
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
