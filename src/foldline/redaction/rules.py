# ruff: noqa: E501  (a regex reads best on one line)
"""The secret formats redacted at the write door, each written from its vendor's public
documentation of the token format, with a literal prefilter.

A rule's ``prefilter`` is a tuple of literals: the rule's regex runs on a text only if one of
them occurs in it (every rule's literals are looked for in one pass, ``scanner.Gate``), so clean
text costs one sweep. A rule whose every match starts at a fixed place before one of its
literals says so (``back``): its regex is tried only there, not at every position of the text
(an output that merely says "key" a few times is not searched whole). A regex with a
group named ``secret`` replaces that group alone (the name in ``GITHUB_TOKEN=`` stays); else the
whole match is replaced. ``check`` (optional) is asked about each match and may keep it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Rule:
    id: str
    regex: re.Pattern[str]
    prefilter: tuple[str, ...]
    check: Callable[[re.Match[str]], bool] | None = field(default=None, compare=False)
    # For each prefilter literal, how many code points before it a match starts, when every match
    # starts there (the regex is then tried only at those places); None: it is searched whole.
    back: tuple[int, ...] | None = field(default=None, compare=False)
    # The literals are found in any ASCII case (the regex ignores case where they occur).
    fold: bool = field(default=False, compare=False)


def rule(
    id: str, pattern: str, *prefilter: str, check: Callable[[re.Match[str]], bool] | None = None,
    back: int | tuple[int, ...] | None = None, fold: bool = False,
) -> Rule:  # fmt: skip
    backs = (back,) * len(prefilter) if isinstance(back, int) else back
    assert backs is None or len(backs) == len(prefilter)
    return Rule(id, re.compile(pattern), prefilter, check, backs, fold)


# Values that name a secret rather than hold one: ${VAR}, $VAR, <password>, {{ x }}, %s, ***, xxxx.
PLACEHOLDER = re.compile(r"^(?:[$<{%]|\*+$|x+$|X+$|\.\.\.)|^(?:changeme|password|secret|example|redacted)$", re.I)
ASSIGNED_MIN = 10  # code points an assigned value must have to be taken for a secret
ASSIGNED_ENTROPY = 3.0  # bits per code point (Shannon) it must carry, at least


def entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def secret_like(value: str) -> bool:
    """A high-entropy value: long enough, letters with digits, no placeholder (a name such as
    ``process.env.TOKEN`` has no digit)."""
    if len(value) < ASSIGNED_MIN or PLACEHOLDER.search(value) or value.startswith("[REDACTED:"):
        return False
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    return letters and digits and entropy(value) >= ASSIGNED_ENTROPY


def _assigned(match: re.Match[str]) -> bool:
    # "key" alone is too common a word: a *_KEY, *-KEY, *.key, apiKey, accessKey name only.
    if match.group("word").lower() == "key":
        before = match.string[max(0, match.start() - 1) : match.start()]
        if not (before in ("_", "-", ".") or (before.isalpha() and before.islower() and match.group("word") == "Key")):
            return False
    return secret_like(match.group("secret"))


def _url_password(match: re.Match[str]) -> bool:
    return not PLACEHOLDER.search(match.group("secret"))


VALUE = r"[A-Za-z0-9+/=_.~!@#$%^&*-]"

BUILTIN: tuple[Rule, ...] = (
    # PEM blocks (RFC 7468), also inside JSON (a GCP service-account key's "private_key").
    rule(
        "private-key",
        r"-----BEGIN (?P<kind>[A-Z0-9 ]{0,20})PRIVATE KEY(?: BLOCK)?-----[\s\S]{1,16384}?-----END (?P=kind)PRIVATE KEY(?: BLOCK)?-----",
        "PRIVATE KEY",
    ),
    # AWS IAM unique ids: a four-letter prefix and 16 base-32 characters (IAM user guide).
    rule("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}\b", "AKIA", "ASIA", "ABIA", "ACCA", "A3T", back=0),
    # A secret access key is 40 base-64 characters, recognisable only by its name.
    rule(
        "aws-secret-key",
        r"(?i:aws_?secret_?access_?key|secretaccesskey|aws_secret)[\"']?\s{0,3}[:=]\s{0,3}[\"']?(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        "ecret", "ECRET",
    ),
    # Google Cloud / Google AI Studio (Gemini) API keys: "AIza" and 35 more characters.
    rule("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", "AIza", back=0),
    # Azure Storage account keys (86 base-64 characters and "==") and Entra ID client secrets ("Q~").
    rule("azure-storage-key", r"(?i:AccountKey)=(?P<secret>[A-Za-z0-9+/]{86}==)", "ccountKey", "CCOUNTKEY", "ccountkey"),
    rule("azure-client-secret", r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])", "Q~"),
    # GitHub: classic (ghp_, gho_), app (ghu_, ghs_, ghr_) and fine-grained (github_pat_) tokens.
    rule("github-fine-grained-token", r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}\b", "github_pat_", back=0),
    rule("github-token", r"\bgh[po]_[A-Za-z0-9]{36}\b", "ghp_", "gho_", back=0),
    rule("github-app-token", r"\bgh[usr]_[A-Za-z0-9]{36}\b", "ghu_", "ghs_", "ghr_", back=0),
    # GitLab: personal, deploy, pipeline-trigger, runner and other prefixed tokens.
    rule(
        "gitlab-token",
        r"\bgl(?:pat|dt|ptt|rt|soat|cbt|imt|ft|agent|oas|wt)-[A-Za-z0-9_.-]{20,}",
        "glpat-", "gldt-", "glptt-", "glrt-", "glsoat-", "glcbt-", "glimt-", "glft-", "glagent-", "gloas-", "glwt-",
        back=0,
    ),
    rule("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", "npm_", back=0),
    # PyPI API tokens are macaroons: "pypi-", then the base-64 of their fixed header (the index's own location).
    rule("pypi-token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", "pypi-AgEIcHlwaS5vcmc", back=0),
    rule("slack-token", r"\bxox[abposr]-[0-9A-Za-z-]{10,250}", "xox", back=0),
    rule("slack-app-token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", "xapp-", back=0),
    rule("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9_/]{20,}", "hooks.slack.com", back=len("https://")),
    rule("discord-webhook", r"https://(?:\w+\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{60,}", "/api/webhooks/"),
    # A Discord bot token: base-64 of the bot's id, a timestamp and an HMAC, dot-separated.
    rule(
        "discord-token",
        r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b",
        "discord", "Discord", "DISCORD",
    ),
    rule("telegram-bot-token", r"\b\d{8,10}:AA[0-9A-Za-z_-]{33}(?![0-9A-Za-z_-])", ":AA"),
    rule(
        "stripe-key",
        r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{24,247}\b|\bwhsec_[0-9A-Za-z]{32,}\b",
        "sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "whsec_",
    ),
    rule("anthropic-key", r"\bsk-ant-(?:api|admin|oat|ort)\d\d-[A-Za-z0-9_-]{80,}", "sk-ant-", back=0),
    # OpenAI: every key holds "T3BlbkFJ" (base-64 of "OpenAI"); project and service keys are prefixed.
    rule(
        "openai-key",
        r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}",
        "T3BlbkFJ", "sk-proj-", "sk-svcacct-", "sk-admin-",
    ),
    rule("huggingface-token", r"\b(?:hf_|api_org_)[A-Za-z]{34}\b", "hf_", "api_org_", back=0),
    # A JSON Web Token (RFC 7519): base-64url header and payload, both JSON objects ("eyJ").
    rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "eyJ", back=0),
    # user:password@ in a URL (RFC 3986 userinfo): the password alone.
    rule(
        "url-password",
        r"\b[A-Za-z][A-Za-z0-9+.-]{1,30}://[^\s:/@'\"<>]{1,256}:(?P<secret>[^\s@/'\"<>]{1,256})@",
        "://",
        check=_url_password,
    ),
    # A high-entropy value assigned to a name that says it is secret (FOO_SECRET=…, "apiKey": "…").
    # The lookahead gives the regex engine a set of first characters to skip to: 3-4x faster
    # than the case-insensitive alternation tried at every position.
    rule(
        "assigned-secret",
        r"(?=[SsTtPpKk])(?P<word>(?i:secret|token|password|passwd|pwd|key))[\"']?\s{0,3}(?::|=|:=)\s{0,3}[\"']?(?P<secret>"
        + VALUE
        + r"{10,512})",
        "ecret", "oken", "assw", "pwd", "key",
        check=_assigned, back=(1, 1, 1, 0, 0), fold=True,  # s|ecret, t|oken, p|assw; in any case
    ),
)  # fmt: skip
