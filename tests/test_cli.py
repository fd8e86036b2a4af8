from __future__ import annotations

import base64
import json
import select
import subprocess
import sys

PAGE = "<html><body><nav>Home | News</nav><p>{}</p><footer>(c) Example</footer></body></html>"


def read_line(proc: subprocess.Popen, timeout: float = 60) -> dict:
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no output for a page that was sent: the CLI did not flush"
    return json.loads(proc.stdout.readline())


def test_clean_streams_one_result_per_page_as_soon_as_it_is_done():
    proc = subprocess.Popen(
        [sys.executable, "-m", "scrapy_detemplate", "clean", "--method", "sandwich"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        pages = [
            {"url": "http://ex.com/a/1", "html": PAGE.format("first story")},
            {"url": "http://ex.com/a/2", "html_b64": base64.b64encode(PAGE.format("second story").encode()).decode()},
        ]
        out = []
        for page in pages:  # each answer arrives before the next page is sent
            proc.stdin.write(json.dumps(page) + "\n")
            proc.stdin.flush()
            out.append(read_line(proc))
        proc.stdin.write("not json\n")
        proc.stdin.flush()
        bad = read_line(proc)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert [o["url"] for o in out] == ["http://ex.com/a/1", "http://ex.com/a/2"]
    assert set(out[0]) >= {"url", "text", "html", "method"}
    assert out[0]["status"] == "unchanged" and "Home" in out[0]["text"]
    assert out[1]["text"] == "second story" and out[1]["method"] == "sandwich"
    assert "error" in bad and proc.returncode == 0


def test_invalid_setting_on_the_command_line_is_named():
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy_detemplate", "clean", "-s", "DETEMPLATE_MAX_NODES=lots"],
        input="", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "DETEMPLATE_MAX_NODES='lots'" in proc.stderr


def test_a_missing_model_file_is_named_without_a_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy_detemplate", "clean", "-s", "DETEMPLATE_COMBINED_MODEL=/missing.json"],
        input="", capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "DETEMPLATE_COMBINED_MODEL='/missing.json'" in proc.stderr and "Traceback" not in proc.stderr


def test_the_module_and_the_cli_module_both_run_the_cli():
    for module in ("scrapy_detemplate", "scrapy_detemplate.cli"):
        proc = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0 and "usage: scrapy-detemplate" in proc.stdout, module


def test_clean_markdown_adds_a_markdown_key_next_to_text_and_html():
    page = {"url": "http://ex.com/a/1", "html": "<h1>Title</h1><p>Some <b>bold</b> words</p><pre>x = 1</pre>"}
    for args, expected in (([], None), (["--markdown"], "# Title\n\nSome **bold** words\n\n```\nx = 1\n```")):
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy_detemplate", "clean", "--method", "none", *args],
            input=json.dumps(page) + "\n", capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        out = json.loads(proc.stdout)
        assert proc.returncode == 0 and out["text"] == "Title\nSome bold words\nx = 1"
        assert out.get("markdown") == expected
        assert list(out)[:3] == ["url", "text", "html"]
