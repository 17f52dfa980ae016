"""Browser fixtures: Debian's Chromium driven by Playwright, against a real Foldline server.

The panel's tests run on one SQLite file of their own (the API's contract suite covers both
backends); the server is the real app under uvicorn in a thread. Alice (``panel``) stays in her one
workspace, "team": a test that adds workspaces or imports sessions does it in an account of its
own (``own_account``), so each file passes alone and in any order.
"""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, Request, Route, sync_playwright
from servers import ServerThread as PanelServer

from foldline import Client
from foldline.service import Transcripts
from foldline.settings import Settings
from foldline.store import open_store

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail("the browser tests need Debian's chromium on PATH (apt-get install chromium)")
    return found


def launch(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)


class HeldRequests:
    """The page's requests to ``pattern`` are held unanswered until :meth:`release`.

    The handler only keeps the route (it never blocks Playwright's dispatcher), so the test
    can assert what the page shows while it waits, then let the request through.
    """

    def __init__(self, page: Page, pattern: str) -> None:
        self.page, self.pattern = page, pattern
        self.routes: list[Route] = []
        page.route(pattern, self.hold)

    def hold(self, route: Route) -> None:
        self.routes.append(route)

    def release(self) -> None:
        deadline = time.monotonic() + 10
        while not self.routes:  # the handler runs while Playwright is pumped, not while Python sleeps
            assert time.monotonic() < deadline, f"the page made no request to {self.pattern}"
            self.page.wait_for_timeout(20)
        for route in self.routes:
            route.continue_()
        self.page.unroute(self.pattern)


def settle(page: Page) -> None:
    """Wait until the page has run every task queued so far (an event's handlers, a request they
    start) and drawn a frame after them: what a fixed pause used to wait for, without the guess."""
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)))")


class Searches:
    """The page's requests to the search API, as they are sent and as they end (answered or dropped)."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.sent: list[Request] = []
        self.ended: list[Request] = []
        page.on("request", lambda r: self.sent.append(r) if "/api/search" in r.url else None)
        page.on("requestfinished", lambda r: self.ended.append(r))
        page.on("requestfailed", lambda r: self.ended.append(r))

    def settled(self, q: str) -> bool:
        last = self.sent[-1] if self.sent else None
        asked = last is not None and parse_qs(urlparse(last.url).query).get("q") == [q]
        return asked and all(r in self.ended for r in self.sent)

    def answered(self, q: str) -> None:
        """Wait until the page has searched for ``q`` and every search it sent has ended: past the
        debounce, with no answer to an older query still to come."""
        deadline = time.monotonic() + 10
        while not self.settled(q):  # Playwright delivers the page's events while it is waited on
            assert time.monotonic() < deadline, f"the page did not finish searching for {q!r}"
            self.page.wait_for_timeout(20)
        settle(self.page)


@dataclass
class Panel:
    url: str
    transcripts: Transcripts
    token: str
    workspace: str
    client: Client

    def agent(self, title: str) -> str:
        agent: str = self.client.create_agent(self.workspace, title=title)["id"]
        return agent

    def put(self, agent: str, role: str, parts: list[dict[str, Any]], message_id: str | None = None) -> str:
        mid = message_id or str(uuid.uuid4())
        self.client.put_message(agent, {"id": mid, "role": role, "parts": parts})
        return mid


@dataclass
class Account:
    """An account of a test's own, in one workspace of its own."""

    id: str
    token: str
    workspace: str


def own_account(panel: Panel, name: str) -> Account:
    account = panel.transcripts.create_account(f"{name} {uuid.uuid4().hex[:6]}")
    workspace = panel.transcripts.create_workspace(name, [account["id"]])["id"]
    return Account(account["id"], account["token"], workspace)


def sign_in(page: Page, token: str) -> Page:
    """Sign a page (of a browser not signed in yet) in with ``token``."""
    page.goto(f"/?token={token}")
    page.wait_for_selector("body[data-ready]")
    return page


def import_largest(panel: Panel, account: Account, path: Path) -> str:
    """Import a session log into the account's workspace: the id of the agent with the most messages."""
    from foldline.importers.importer import import_paths

    import_paths(panel.transcripts, [path], account_id=account.id, workspace_id=account.workspace)
    agents = panel.transcripts.list_agents(account.id, account.workspace)["agents"]
    sizes = {a["id"]: len(panel.transcripts.messages(account.id, a["id"])["messages"]) for a in agents}
    return max(sizes, key=lambda a: sizes[a])


@pytest.fixture(scope="session")
def panel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Panel]:
    db = str(Path(tmp_path_factory.mktemp("panel")) / "foldline.db")
    store = open_store(db)
    transcripts = Transcripts(store, settings=Settings(db=db, poll_seconds=0.2))
    alice = transcripts.create_account("alice")
    workspace = transcripts.create_workspace("team", [alice["id"]])
    with PanelServer(transcripts) as server, Client(server.url, alice["token"]) as client:
        yield Panel(server.url, transcripts, alice["token"], workspace["id"], client)
    store.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        b = launch(playwright)
        yield b
        b.close()


@pytest.fixture
def context(browser: Browser, panel: Panel) -> Iterator[BrowserContext]:
    ctx = browser.new_context(
        base_url=panel.url, permissions=["clipboard-read", "clipboard-write"], accept_downloads=True
    )
    ctx.set_default_timeout(10_000)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


@pytest.fixture
def signed_in(page: Page, panel: Panel) -> Page:
    """A page whose browser holds alice's sign-in cookie."""
    return sign_in(page, panel.token)


LARGEST_SESSION = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "transcripts"
    / "claude-code"
    / "codemie-ai__codemie-code"
    / "session-624a4a58.jsonl"
)  # the largest real Claude Code session kept in tests/data


@pytest.fixture(scope="session")
def imported_largest(panel: Panel) -> tuple[Account, str]:
    """The largest real Claude Code session, imported once into an account of its own."""
    account = own_account(panel, "imported")
    return account, import_largest(panel, account, LARGEST_SESSION)


@pytest.fixture
def largest_session(page: Page, imported_largest: tuple[Account, str]) -> str:
    """The largest real session's agent id; ``page`` is signed in as the account it was imported into."""
    account, agent = imported_largest
    sign_in(page, account.token)
    return agent
