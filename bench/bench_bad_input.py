"""How long the engine takes on oversized pages (the bounds in the README).

    python bench/bench_bad_input.py

A 5 MB page and a page of 100,000 lines, each after a peer in the same
directory, with the default bounds and with the bounds raised.
"""

from __future__ import annotations

import time

from scrapy_detemplate import DetemplateConfig, Detemplater

PAGE = (
    "<html><body><nav><a href='/'>Home</a><a href='/n'>News</a></nav>"
    "<main><h1>{title}</h1>{body}</main><footer>Copyright Example</footer></body></html>"
)


def timed(engine: Detemplater, title: str, body: str) -> tuple[str, float]:
    engine.process("http://ex.com/d/peer", PAGE.format(title="Peer", body=body).encode())
    start = time.perf_counter()
    result = engine.process(f"http://ex.com/d/{title}", PAGE.format(title=title, body=body + "<p>new</p>").encode())
    return f"{result.status}/{result.reason or '-'}", time.perf_counter() - start


def main() -> None:
    five_mb = ("<p>" + "words of a long article " * 40 + "</p>\n") * 5200
    lines = "<br>\n".join(f"line {i}" for i in range(100_000))
    raised = DetemplateConfig(max_nodes=1_000_000, max_lines=1_000_000, max_bytes=64 << 20)
    print(f"{'page':<28} {'bounds':<8} {'result':<22} {'seconds':>8}")
    for name, body in (("5 MB", five_mb), ("100,000 lines (<br>)", lines)):
        for label, config in (("default", DetemplateConfig()), ("raised", raised)):
            status, seconds = timed(Detemplater(config), "page", body)
            print(f"{name:<28} {label:<8} {status:<22} {seconds:>8.2f}")


if __name__ == "__main__":
    main()
