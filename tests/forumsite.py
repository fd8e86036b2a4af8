"""A generated forum: thread pages in a Discourse- or phpBB-like theme.

Each thread page has the template a forum puts around its posts (a header with
the forum's name, its menu, log-in links and a search box; a sidebar of
categories; a footer; under each post its action links) and content that a
news-trained extractor is tempted to drop, because on a news page it would be a
comment thread: the opening post and the replies below it, each a record with
its author, its age and one or more paragraphs, some quoting an earlier post,
some with a code block, some a single short sentence.

Posts are records of the class ``post`` (phpBB, Discourse's ``topic-post``,
vBulletin's ``postbit``), or, with ``replies="comment"``, a thread of *comments*
(old Reddit, lobste.rs: ``comment``, ``comment-body``), the opening post among them.

The generator knows which visible lines are content and which are template, so a
test can check that the content survives whole and the template goes.
"""

from __future__ import annotations

import html
import random
from dataclasses import dataclass

from docsite import sentence

FORUM = "Frobnicate community forum"
CATEGORIES = ("General", "Help", "Announcements", "Plugins", "Off-topic", "Jobs")
FOOTER = ("© 2026 the Frobnicate project.", "Privacy", "Terms of service", "Powered by Forumware 3.1")
ACTIONS = ("Reply", "Like", "Share", "Flag")
USERS = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "oscar", "peggy")
THREADS = 12
_SHORT = (
    "Thanks @{user}, that fixed it on {version}.",
    "Same problem here with {version}.",
    "Confirmed on {version} as well, @{user}.",
    "Marked as solved, it works on {version} now.",
)


@dataclass(frozen=True)
class ThreadPage:
    url: str
    body: bytes
    title: str  # the thread's title (its <h1>)
    posts: tuple[str, ...]  # visible lines of the posts' own text (not the quotes of earlier posts)
    template: tuple[str, ...]  # visible lines of the template


def _post(rng: random.Random, n: int, earlier: list[str], replies: str) -> tuple[str, list[str]]:
    """Post ``n`` of a thread (0: the opening post): its markup and its content lines."""
    user = rng.choice(USERS)
    parts: list[str] = []
    lines: list[str] = []
    if n and earlier and rng.random() < 0.3:
        quoted = rng.choice(earlier)
        parts.append(f'<aside class="quote"><div class="title">{rng.choice(USERS)}:</div><blockquote><p>'
                     f"{html.escape(quoted)}</p></blockquote></aside>")  # fmt: skip
    if n and rng.random() < 0.25:
        text = rng.choice(_SHORT).format(user=rng.choice(USERS), version=f"3.{rng.randint(0, 9)}.{rng.randint(0, 20)}")
        parts.append(f"<p>{text}</p>")
        lines.append(text)
    else:
        for _ in range(rng.randint(1, 3)):
            text = sentence(rng, rng.randint(8, 22))
            parts.append(f"<p>{html.escape(text)}</p>")
            lines.append(text)
        if rng.random() < 0.3:
            code = [f"frob.config.set('{rng.choice(USERS)}_{i}', {rng.randint(0, 99)})" for i in range(3)]
            parts.append("<pre><code>" + "\n".join(html.escape(c) for c in code) + "</code></pre>")
            lines.extend(code)
    record, meta, text, controls = (
        ("topic-post post", "topic-meta-data", "cooked", "post-controls")
        if replies == "post"
        else ("comment", "comment-meta", "comment-body", "comment-actions")
    )
    markup = (
        f'<article class="{record}" id="post_{n + 1}"><div class="{meta}">'
        f'<span class="names"><a class="username" href="/u/{user}">{user}</a></span>'
        f'<span class="post-date">{rng.randint(1, 23)}h</span></div>'
        f'<div class="{text}">{"".join(parts)}</div>'
        f'<nav class="{controls}">'
        + " ".join(f'<button class="{a.lower()}">{a}</button>' for a in ACTIONS)
        + "</nav></article>"
    )
    return markup, lines


def page(index: int, seed: int = 0, replies: str = "post") -> ThreadPage:
    """Thread ``index`` of the forum (0 <= index < :data:`THREADS`); its posts are ``replies``
    records (``"post"`` or ``"comment"``)."""
    rng = random.Random(seed * 1000 + index)
    title = f"How do I make the {sentence(rng, 4)[:-1].lower()} work with plugins?"
    category = rng.choice(CATEGORIES)
    content: list[str] = [title]
    posts: list[str] = []
    for n in range(rng.randint(3, 9)):
        markup, lines = _post(rng, n, content[1:], replies)
        posts.append(markup)
        content.extend(lines)
    header = (
        f'<header class="d-header"><a class="title" href="/">{FORUM}</a>'
        '<nav class="nav-pills"><a href="/latest">Latest</a> <a href="/categories">Categories</a> '
        '<a href="/top">Top</a></nav><div class="panel"><a href="/login">Log in</a> <a href="/signup">Sign up</a>'
        '<form action="/search"><input name="q"><button>Search</button></form></div></header>'
    )
    sidebar = (
        '<aside class="sidebar"><h3>Categories</h3><ul>'
        + "".join(f'<li><a href="/c/{c.lower()}">{c}</a></li>' for c in CATEGORIES)
        + "</ul></aside>"
    )
    footer = (
        f'<footer class="footer"><p>{html.escape(FOOTER[0])}</p><a href="/privacy">{FOOTER[1]}</a> '
        f'<a href="/tos">{FOOTER[2]}</a><p>{FOOTER[3]}</p></footer>'
    )
    body = (
        f"<!DOCTYPE html><html><head><title>{html.escape(title)} - {category} - {FORUM}</title></head><body>"
        f'{header}<div id="main-outlet">{sidebar}<div class="topic-area">'
        f'<h1 class="fancy-title">{html.escape(title)}</h1>'
        f'<div class="topic-category"><a href="/c/{category.lower()}">{category}</a></div>'
        f'<div class="post-stream">{"".join(posts)}</div></div></div>{footer}</body></html>'
    )
    template = (
        FORUM, "Latest Categories Top", "Log in Sign up", "Search", "Categories",
        *(c for c in CATEGORIES if c != category), FOOTER[0], f"{FOOTER[1]} {FOOTER[2]}", FOOTER[3], " ".join(ACTIONS),
    )  # fmt: skip
    return ThreadPage(f"http://forum.example/t/{index}", body.encode("utf-8"), title, tuple(content[1:]), template)


def site(seed: int = 0, replies: str = "post") -> list[ThreadPage]:
    """Every thread page of the forum, in crawl order."""
    return [page(i, seed, replies) for i in range(THREADS)]
