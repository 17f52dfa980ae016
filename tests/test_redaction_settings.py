"""The redaction settings: the off switch, an extra-rules file and its allowlist, and a bad file refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_secrets import make

from foldline.redaction import RulesError, load
from foldline.settings import Settings

SECRETS = make(seed=77)


def test_the_off_switch_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().redact is True
    monkeypatch.setenv("FOLDLINE_REDACT", "off")
    assert Settings().redact is False
    monkeypatch.setenv("FOLDLINE_REDACT", "maybe")
    with pytest.raises(ValueError, match="FOLDLINE_REDACT is 'on' or 'off'"):
        Settings()


def test_a_rules_file_adds_rules_and_an_allowlist(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    aws = SECRETS["aws-access-key"]
    path.write_text(
        f"""
[[rule]]
id = "acme-key"
regex = "acme_(?P<secret>[a-z0-9]{{12}})"
prefilter = "acme_"

[allow]
values = ["{aws}"]
patterns = ["sk_live_.*"]
"""
    )
    redactor = load(path)
    text = f"acme_abcdef123456 {aws} {SECRETS['stripe-key']} {SECRETS['npm-token']}"
    assert redactor.text(text) == (
        f"acme_[REDACTED:acme-key] {aws} {SECRETS['stripe-key']} [REDACTED:npm-token]",
        2,
    )


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("[[rule]]\nid = 'x'\n", "regex must be"),
        ("[[rule]]\nid = 'Bad Id'\nregex = 'a'\n", "id is lower-case"),
        ("[[rule]]\nid = 'x'\nregex = '('\n", "not a regex"),
        ("[[rule]]\nid = 'x'\nregex = 'a*'\n", "matches an empty text"),
        ("[[rule]]\nid = 'x'\nregex = 'a'\nflags = 'i'\n", "takes id, regex and prefilter only"),
        ("[allow]\nvalues = 3\n", "allow.values must be"),
        ("not toml [", "cannot read"),
    ],
)
def test_a_bad_rules_file_is_refused_with_the_reason(tmp_path: Path, body: str, said: str) -> None:
    path = tmp_path / "rules.toml"
    path.write_text(body)
    with pytest.raises(RulesError, match=said):
        load(path)
    with pytest.raises(ValueError, match=said):  # the settings say it when they are made
        Settings(redact_rules=path)
    Settings(redact_rules=path, redact=False)  # nothing is read when redaction is off
