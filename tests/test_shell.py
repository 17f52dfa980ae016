"""A transcript's shell holds its script and stylesheet (foldline/panel/shell.py): written so that the
HTML parser ends them where they end, and allowed by their hashes."""

from __future__ import annotations

import shutil
import subprocess
import zlib

from foldline.panel.shell import CSP, Head, inline_script, inline_style, source_hash

HEAD = '<head><link rel="stylesheet" href="/static/panel.css">\n<script type="module" src="/static/bundle.js"></script>'


def test_a_script_cannot_end_early_and_means_the_same() -> None:
    source = 'const s = "</SCRIPT><!-- x", r = /<!--|<\\/script/i;\r\nglobalThis.out = [s, r.test("<!--")];'
    text = inline_script(source)
    assert text is not None and "\r" not in text
    assert "<!--" not in text and "</script" not in text.lower()
    node = shutil.which("node")
    if node:
        run = subprocess.run([node, "-e", text + "\nconsole.log(JSON.stringify(globalThis.out))"],
                             capture_output=True, text=True, check=True)  # fmt: skip
        assert run.stdout.strip() == '["</SCRIPT><!-- x",true]'
    assert inline_script("a\0b") is None


def test_a_stylesheet_that_could_end_early_stays_by_address() -> None:
    assert inline_style("a { color: red }") == "a { color: red }"
    head = Head.build(HEAD, "let a = 1;", "a::after { content: '</style>' }")
    assert b'href="/static/panel.css"' in head.raw and "style-src 'self';" in head.csp


def test_the_head_is_compressed_once_and_each_response_continues_it() -> None:
    head = Head.build(HEAD, "let a = 1;", "a { color: red }")
    assert head.csp == CSP.replace("script-src 'self'", "script-src 'self' " + source_hash("let a = 1;")).replace(
        "style-src 'self'", "style-src 'self' " + source_hash("a { color: red }")
    )
    assert b'<script type="module">let a = 1;</script>' in head.raw and b"<style>a { color: red }</style>" in head.raw
    for tail in (b"<p>one</p>", b"<p>two</p>"):
        packer = head.zip.copy()
        body = head.packed + packer.compress(tail) + packer.flush(zlib.Z_FINISH)
        assert zlib.decompress(body, 31) == head.raw + tail
