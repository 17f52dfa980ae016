"""The scanner alone: every kind of secret replaced by its marker, the text around it kept, and
what only looks like a secret (shas, UUIDs, digests, images, prose) left as it is."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import uuid
from dataclasses import replace

import pytest
from fake_secrets import in_context, make
from hypothesis import given, settings
from hypothesis import strategies as st

from foldline.redaction import Allowlist, Redactor, Rule, marker
from foldline.redaction.rules import BUILTIN

SECRETS = make()


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_kind_is_replaced_by_its_marker_and_the_text_around_kept(kind: str) -> None:
    secret = SECRETS[kind]
    line = in_context(kind, secret)
    before, after = line.split(secret)
    text = f"look:\n{line}\nand then go on."
    redacted, found = Redactor().text(text)
    assert found == 1
    assert secret not in redacted
    assert redacted == f"look:\n{before}{marker(kind)}{after}\nand then go on."


def test_a_gcp_service_account_key_file_loses_its_private_key() -> None:
    key = SECRETS["private-key"].replace("RSA ", "")
    account = {"type": "service_account", "project_id": "demo", "private_key": key, "client_email": "x@demo.iam"}
    pasted = json.dumps(account)  # the newlines are \n escapes in the JSON text
    redacted, found = Redactor().text(pasted)
    assert found == 1
    body = key.split("\n")[1]
    assert body not in redacted and json.loads(redacted)["private_key"] == marker("private-key")


def test_aws_secret_key_and_azure_and_discord_and_slack_webhook() -> None:
    rnd = random.Random(3)
    aws = "".join(rnd.choice("ABCDEFabcdef0123456789/+") for _ in range(40))
    azure = "abc8Q~" + "".join(rnd.choice("ABCdef0123_.~") for _ in range(34))
    discord = "MT" + "".join(rnd.choice("ABCdefXYZ0123") for _ in range(24)) + ".GhIjKl." + "a1B2" * 8
    hook = "https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/" + "x1Y2" * 6
    text = f"aws_secret_access_key = {aws}\nclient secret {azure}\nDiscord bot {discord}\n{hook}"
    redacted, found = Redactor().text(text)
    assert found == 4
    for secret in (aws, azure, discord, hook):
        assert secret not in redacted
    assert "aws_secret_access_key = [REDACTED:aws-secret-key]" in redacted


def test_names_that_say_secret_need_a_high_entropy_value() -> None:
    kept = (
        "GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
        "password: <your password>",
        "DB_PASSWORD=$DB_PASSWORD",
        "max_tokens=4096",
        "API_KEY=changeme",
        "token = process.env.TOKEN",  # letters and dots only
        "the key: see the docs",
        "monkey=abcdefgh12345",  # "key" ends a word, not a *_KEY name
    )
    for line in kept:
        assert Redactor().text(line) == (line, 0), line
    for line in ("MY_API_KEY=q8Zt3LmW0pXv7RnS", '"client_secret": "Zq93-ldk20FJ8sla0"', "apiKey: 'aZ09bY18cX27'"):
        redacted, found = Redactor().text(line)
        assert found == 1 and "[REDACTED:assigned-secret]" in redacted, line


def test_what_only_looks_like_a_secret_passes_unchanged() -> None:
    rnd = random.Random(7)
    sha = hashlib.sha1(b"x").hexdigest()
    image = base64.b64encode(bytes(rnd.randrange(256) for _ in range(300_000))).decode()
    texts = [
        f"commit {sha}\nMerge: {sha[:7]} {hashlib.sha1(b'y').hexdigest()[:7]}",
        f"id {uuid.UUID(int=rnd.getrandbits(128))} and {uuid.uuid5(uuid.NAMESPACE_DNS, 'a')}",
        f"sha256:{hashlib.sha256(b'layer').hexdigest()}",
        f"integrity sha512-{base64.b64encode(hashlib.sha512(b'p').digest()).decode()}",
        f"data:image/png;base64,{image}",
        "The token budget ran out, so the password reset flow was left for tomorrow. Keys and secrets "
        "live in the vault; see https://example.com/docs#secret-management and git@github.com:org/repo.git.",
        "ssh://git@github.com/org/repo.git and https://user@host/path and http://localhost:8080/a:b@c",
        "const key = 'value'; let token = getToken(); if (password === confirm) {}",
    ]
    for text in texts:
        redacted, found = Redactor().text(text)
        assert (found, redacted == text) == (0, True), text[:80]


def test_a_redacted_text_is_redacted_again_as_it_is() -> None:
    text = "\n".join(in_context(k, s) for k, s in SECRETS.items())
    once, found = Redactor().text(text)
    assert found == len(SECRETS)
    assert Redactor().text(once) == (once, 0)


def test_the_allowlist_keeps_literals_and_patterns() -> None:
    aws, stripe = SECRETS["aws-access-key"], SECRETS["stripe-key"]
    allow = Allowlist(frozenset({aws}), (re.compile(r"sk_live_.*"),))
    text = f"{aws} {stripe} {SECRETS['npm-token']}"
    assert Redactor(allow=allow).text(text) == (f"{aws} {stripe} {marker('npm-token')}", 1)


def test_an_extra_rule_with_a_secret_group() -> None:
    extra = Rule("acme-key", re.compile(r"acme=(?P<secret>[a-z]{8})"), ("acme=",))
    assert Redactor(rules=(extra,)).text("x acme=abcdefgh y") == ("x acme=[REDACTED:acme-key] y", 1)


def test_a_message_walk_counts_every_string_and_records_it_in_foldline_metadata() -> None:
    gh, npm, jwt, aws = (SECRETS[k] for k in ("github-token", "npm-token", "jwt", "aws-access-key"))
    message = {
        "id": "m",
        "role": "assistant",
        "metadata": {"note": f"key {aws}", "foldline": {"other": 1}},
        "parts": [
            {"type": "text", "text": f"token {gh}"},
            {"type": "reasoning", "text": f"maybe {npm}"},
            {"type": "tool-bash", "toolCallId": "c", "state": "output-error",
             "input": {"env": [{"value": jwt}], "n": 3}, "errorText": f"bad {gh}"},
        ],
    }  # fmt: skip
    original = json.dumps(message)
    redacted, found = Redactor().message(message)
    assert found == 5
    assert json.dumps(message) == original  # the caller's message is not changed
    dumped = json.dumps(redacted)
    assert all(s not in dumped for s in (gh, npm, jwt, aws))
    assert redacted["metadata"]["foldline"] == {"other": 1, "redacted": 5}
    assert redacted["parts"][2]["input"]["n"] == 3
    clean = {"id": "m", "role": "user", "parts": [{"type": "text", "text": "hello"}]}
    assert Redactor().message(clean) == (clean, 0)


@pytest.mark.parametrize("kind", ["github-token", "assigned-secret", "private-key"])
def test_a_secret_in_a_big_output_is_found_wherever_it_falls(kind: str) -> None:
    # A text past one window of the literal search: the secret's literal across the boundary
    # between two windows, and at the very end, is found as it is in a short text.
    from foldline.redaction.scanner import WINDOW

    secret, line = SECRETS[kind], in_context(kind, SECRETS[kind])
    at = line.index(secret) + 2  # the boundary falls inside the secret's first characters
    filler = ("build ok, nothing to see " * (WINDOW // 20))[: WINDOW - at]
    for text in (filler + line + filler, filler + filler + line):
        redacted, found = Redactor().text(text)
        assert found == 1 and secret not in redacted and marker(kind) in redacted


# Pieces a text is made of: every kind of secret in its context, the literals alone and in
# near misses (a name with no value, a value too short, a prefix and no token), and prose.
PIECES = [
    *(in_context(kind, secret) for kind, secret in SECRETS.items()),
    *(literal for rule in BUILTIN for literal in rule.prefilter),
    "monkey=abc123DEF456ghi", "api_key: short", "token = ${TOKEN}", "Pwd=Zx9Qw8Er7Ty6Ui5", "xoxb-", "AKIA",
    "PassWord = Zx9Qw8Er7Ty6Ui5", "sEcReT: Zx9Qw8Er7Ty6Ui5", "tOkEn=Zx9Qw8Er7Ty6Ui5", "dbKEY=Zx9Qw8Er7Ty6Ui5",
    "eyJ", "AIza", "secret", "the build passed", "\n", " ", "=", ":", '"', "é", "🙂",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_a_rule_tried_only_where_its_matches_start_finds_what_a_whole_search_finds(text: str) -> None:
    # Rule.back: a rule whose matches start at a fixed place before one of its literals is tried
    # only there; the same text searched whole by every rule redacts alike.
    whole = Redactor(rules=tuple(replace(rule, back=None) for rule in BUILTIN))
    assert Redactor().text(text) == whole.text(text)
    assert any(rule.back is not None for rule in BUILTIN)


@pytest.mark.parametrize("name", ["PassWord", "sEcReT", "tOkEn", "Pwd", "dbPassWd", "API_kEy"])
def test_a_name_that_says_secret_is_found_in_any_case(name: str) -> None:
    # assigned-secret's name is matched ignoring case, and its literals are found in any case:
    # a value after "PassWord" is redacted whether or not the text also holds "password".
    for text in (f"{name} = Zx9Qw8Er7Ty6Ui5 and on", f"{name}: Zx9Qw8Er7Ty6Ui5 beside a monkey"):
        assert Redactor().text(text) == (text.replace("Zx9Qw8Er7Ty6Ui5", marker("assigned-secret")), 1)
