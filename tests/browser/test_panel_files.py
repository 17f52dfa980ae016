"""Attachments by reference: a file whose data URL is over the bound is a placeholder until asked for."""

from __future__ import annotations

import base64
import random
import struct
import zlib
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from waits import eventually

from .conftest import HeldRequests, Panel
from .test_panel import count_parts, open_agent

pytestmark = pytest.mark.browser


def png(width: int, height: int, seed: int = 7) -> bytes:
    """A real RGB PNG of noise (so it does not compress): every chunk and checksum as the format asks."""
    noise = random.Random(seed)
    rows = b"".join(b"\x00" + noise.randbytes(width * 3) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")


def data_url(media: str, body: bytes) -> str:
    return f"data:{media};base64,{base64.b64encode(body).decode()}"


def attach(panel: Panel, title: str, file: dict[str, Any]) -> tuple[str, str]:
    agent = panel.agent(title)
    mid = panel.put(agent, "user", [{"type": "text", "text": "Here is what I see."}, {"type": "file", **file}])
    panel.put(agent, "assistant", [{"type": "text", "text": "I see it."}])
    return agent, mid


IMAGE = data_url("image/png", png(256, 200))  # about 200 KB as a data URL


def test_a_big_image_is_a_placeholder_until_shown(signed_in: Page, panel: Panel) -> None:
    assert len(IMAGE) > 190_000
    agent, mid = attach(panel, "screenshot", {"mediaType": "image/png", "filename": "screen.png", "url": IMAGE})
    fetched = count_parts(signed_in)
    with signed_in.expect_response(lambda r: r.url.endswith(f"/agents/{agent}")) as first:  # the shell holds the page
        open_agent(signed_in, agent)
    assert IMAGE[:64] in panel.client.messages(agent)["messages"][0]["parts"][1]["url"]  # stored whole
    body = first.value.text().split('id="first-view">', 1)[1]  # the page the shell held
    assert IMAGE[2048:2200] not in body and len(body) < 20_000  # the page carried no data URL
    node = signed_in.locator(f'[data-message="{mid}"][data-part="1"]')
    expect(node).to_contain_text("screen.png")
    size = f"{len(IMAGE) / 1024:.1f} KB"
    expect(node.locator(".media")).to_have_text(f"image/png · {size}")
    expect(node.locator("img")).to_have_count(0)
    assert fetched == []

    held = HeldRequests(signed_in, "**/parts/1")
    node.get_by_role("button", name="Show image").click()
    expect(node.locator(".file-ref")).to_have_text("Reading the whole file…")
    held.release()
    img = node.locator("img.file-image")
    expect(img).to_be_visible()
    eventually(lambda: img.evaluate("i => i.complete && i.naturalWidth") == 256)
    assert img.get_attribute("src") == IMAGE
    assert len(fetched) == 1
    assert node.get_attribute("data-message") == mid and node.get_attribute("data-part") == "1"


def test_a_failed_read_of_a_file_says_so_and_retries(signed_in: Page, panel: Panel) -> None:
    agent, mid = attach(panel, "screenshot, offline", {"mediaType": "image/png", "url": IMAGE})
    signed_in.route("**/parts/1", lambda route: route.abort())
    open_agent(signed_in, agent)
    node = signed_in.locator(f'[data-message="{mid}"][data-part="1"]')
    node.get_by_role("button", name="Show image").click()
    expect(node.locator(".file-ref")).to_contain_text("was not read")
    signed_in.unroute("**/parts/1")
    node.get_by_role("button", name="Retry").click()
    img = node.locator("img.file-image")
    eventually(lambda: img.count() == 1 and img.evaluate("i => i.complete && i.naturalWidth") == 256)


@pytest.mark.parametrize(
    "media,name",
    [("text/html", "page.html"), ("image/svg+xml", "drawing.svg")],
    ids=["html", "svg"],
)
def test_a_big_non_raster_file_is_only_ever_a_download(signed_in: Page, panel: Panel, media: str, name: str) -> None:
    if media == "text/html":
        content = ("<script>document.title='pwned'</script>" + "<p>hello</p>" * 2000).encode()
    else:
        svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script>' + "<g/>" * 2000 + "</svg>"
        content = svg.encode()
    url = data_url(media, content)
    agent, mid = attach(panel, f"a {media} file", {"mediaType": media, "filename": name, "url": url})
    open_agent(signed_in, agent)
    node = signed_in.locator(f'[data-message="{mid}"][data-part="1"]')
    expect(node.locator(".media")).to_contain_text(media + " · ")
    node.get_by_role("button", name="Show file").click()
    download_button = node.get_by_role("button", name="Download")
    expect(download_button).to_be_visible()
    assert node.locator("img, iframe, object, embed, a[href^='data:']").count() == 0
    with signed_in.expect_download() as got:
        download_button.click()
    download = got.value
    assert download.suggested_filename == name
    path = download.path()
    assert path is not None and path.read_bytes() == content
    assert signed_in.title() != "pwned" and len(signed_in.context.pages) == 1
