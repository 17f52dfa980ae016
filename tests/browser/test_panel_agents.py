"""The agents list in the panel: where each agent ran, its messages, tokens and cost, a live mark,
sorting, filtering by project (or no project), the choices kept in the address, and pages of 50."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import Page, expect

from foldline import Client

from .conftest import Panel, own_account, sign_in

pytestmark = pytest.mark.browser


def test_the_list_shows_where_agents_ran_and_what_they_cost_sorts_filters_and_pages(page: Page, panel: Panel) -> None:
    own = own_account(panel, f"fleet-{uuid.uuid4().hex[:6]}")  # its 52 agents in a workspace of its own
    with Client(panel.url, own.token) as client:
        shows_and_pages(sign_in(page, own.token), client, own.workspace)


def shows_and_pages(signed_in: Page, client: Client, workspace: str) -> None:
    for i in range(49):
        client.create_agent(workspace, title=f"bulk {i:02d}")
    agent = client.create_agent(workspace, title="aaa the one that ran")["id"]
    usage = {"inputTokens": 12000, "outputTokens": 800, "inputTokenDetails": {"cacheReadTokens": 10000}}
    meta = {"cwd": "/home/ada/src/rocket", "gitBranch": "feat/fuel", "model": "claude-sonnet-4-5", "usage": usage}
    client.put_message(
        agent, {"id": str(uuid.uuid4()), "role": "assistant", "parts": [{"type": "text", "text": "done"}],
                "metadata": meta},
    )  # fmt: skip
    # Two folders of one name, and a model with no price beside a priced one.
    clis = {}
    for repo, model in (("api", "my-local-llama"), ("web", "claude-sonnet-4-5")):
        clis[repo] = client.create_agent(workspace, title=f"bulk {repo} cli")["id"]
        for name in (model, "claude-sonnet-4-5"):
            client.put_message(clis[repo], {"id": str(uuid.uuid4()), "role": "assistant", "parts": [
                {"type": "text", "text": "ok"}], "metadata": {"cwd": f"/home/ada/{repo}/cli", "model": name,
                "usage": {"inputTokens": 1000, "outputTokens": 10}}})  # fmt: skip
    signed_in.goto("/")
    section = signed_in.locator(f'section[data-workspace="{workspace}"]')
    row = section.locator(f'li[data-agent="{agent}"]')
    expect(row.locator(".live-mark")).to_have_text("live")
    expect(row.locator(".source")).to_have_text("API")
    expect(row.locator(".project")).to_have_text("rocket")
    expect(row.locator(".project")).to_have_attribute("title", "/home/ada/src/rocket")
    expect(row.locator(".branch")).to_have_text("feat/fuel")
    expect(row.locator(".model")).to_have_text("claude-sonnet-4-5")
    expect(row.locator(".count")).to_have_text("1 message")
    expect(row.locator(".usage")).to_contain_text("13k tok · $")
    assert "genai-prices" in (row.locator(".usage").get_attribute("title") or "")
    # 52 agents: the first page holds 50, the next is read on request
    expect(section.locator("li")).to_have_count(50)
    section.locator("button.more-agents").click()
    expect(section.locator("li")).to_have_count(52)
    expect(section.locator("button.more-agents")).to_be_hidden()
    # a total with an unpriced model says what the priced messages cost, and "+ ?"
    expect(section.locator(f'li[data-agent="{clis["api"]}"] .usage')).to_contain_text(" + ?")
    expect(section.locator(f'li[data-agent="{clis["web"]}"] .usage')).not_to_contain_text("?")
    # sorted by title: "aaa…" first
    section.locator(".sort select").select_option("title")
    expect(section.locator("li").first).to_have_attribute("data-agent", agent)
    # the project filter tells the two "cli" folders apart
    options = section.locator(".project select option").all_text_contents()
    assert {"api/cli (1)", "web/cli (1)", "rocket (1)"} <= set(options), options
    # only the agents that ran in that folder
    section.locator(".project select").select_option(label="rocket (1)")
    expect(section.locator("li")).to_have_count(1)
    section.locator("li .agent-title").click()
    expect(signed_in.locator(".agent-summary .by-model")).to_contain_text("claude-sonnet-4-5: 13k tok")


def test_the_list_shows_new_agents_and_activity_without_a_reload(page: Page, panel: Panel) -> None:
    """An open agents list follows its workspace: an agent made by an import or a watch (here,
    through the API) shows up within a few seconds, and so does new activity, with no reload."""
    own = own_account(panel, f"live-{uuid.uuid4().hex[:6]}")
    with Client(panel.url, own.token) as client:
        first = client.create_agent(own.workspace, title="there before")["id"]
        sign_in(page, own.token).goto("/")
        section = page.locator(f'section[data-workspace="{own.workspace}"]')
        expect(section.locator("li")).to_have_count(1)
        later = client.create_agent(own.workspace, title="made while the list is open")["id"]
        client.put_message(later, {"id": str(uuid.uuid4()), "role": "user", "parts": [{"type": "text", "text": "hi"}]})
        expect(section.locator(f'li[data-agent="{later}"]')).to_be_visible(timeout=15_000)
        expect(section.locator("li").first).to_have_attribute("data-agent", later)  # the newest activity first
        expect(section.locator(f'li[data-agent="{first}"]')).to_be_visible()


def test_the_list_s_choices_stay_in_the_address_and_no_project_is_one(page: Page, panel: Panel) -> None:
    """The sort and the filters are kept in the address (replaceState), so a reload and Back keep
    them; "No project" keeps the agents that name no folder."""
    own = own_account(panel, f"kept-{uuid.uuid4().hex[:6]}")
    with Client(panel.url, own.token) as client:
        agents = {}
        for title, cwd in (("zz in rocket", "/home/ada/rocket"), ("in fuel", "/home/ada/fuel"), ("nowhere", None)):
            agents[title] = client.create_agent(own.workspace, title=title)["id"]
            hi = {"id": str(uuid.uuid4()), "role": "user", "parts": [{"type": "text", "text": "hi"}]}
            client.put_message(agents[title], {**hi, "metadata": {"cwd": cwd} if cwd else {}})
    sign_in(page, own.token).goto("/")
    section = page.locator(f'section[data-workspace="{own.workspace}"]')
    expect(section.locator("li")).to_have_count(3)
    section.locator(".project select").select_option(label="No project (1)")
    expect(section.locator("li")).to_have_count(1)
    expect(section.locator("li")).to_have_attribute("data-agent", agents["nowhere"])
    assert page.url.endswith(f"/?workspace={own.workspace}&no_project=true"), page.url

    page.reload()
    expect(section.locator("li")).to_have_count(1)
    expect(section.locator("li")).to_have_attribute("data-agent", agents["nowhere"])
    expect(section.locator(".project select")).to_have_value("none")

    section.locator(".sort select").select_option("title")
    section.locator(".project select").select_option(label="rocket (1)")
    expect(section.locator("li")).to_have_count(1)
    expect(section.locator("li")).to_have_attribute("data-agent", agents["zz in rocket"])
    assert page.url.endswith(f"/?workspace={own.workspace}&sort=title&project=%2Fhome%2Fada%2Frocket"), page.url
    section.locator("li .agent-title").click()  # to the agent, then Back: the list as it was
    expect(page.locator("#crumb h1")).to_have_text("zz in rocket")
    page.go_back()
    expect(section.locator("li")).to_have_count(1)
    expect(section.locator("li")).to_have_attribute("data-agent", agents["zz in rocket"])
    expect(section.locator(".sort select")).to_have_value("title")
    section.locator(".project select").select_option(label="All projects")
    expect(section.locator("li")).to_have_count(3)
    expect(section.locator("li").first).to_have_attribute("data-agent", agents["in fuel"])  # by title
    assert page.url.endswith(f"/?workspace={own.workspace}&sort=title"), page.url
    section.locator(".sort select").select_option("activity")
    expect(section.locator("li").first).to_have_attribute("data-agent", agents["nowhere"])  # the newest
    assert page.url.endswith("/"), page.url
