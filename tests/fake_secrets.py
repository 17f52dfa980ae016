"""Fake but well-formed secrets, one per kind, made fresh by a seeded generator (none is real,
none is written in this repository: each test builds its own)."""

from __future__ import annotations

import base64
import random
import string

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def make(seed: int = 21) -> dict[str, str]:
    """The rule id each secret should be reported as, mapped to the secret."""
    rnd = random.Random(seed)

    def pick(alphabet: str, n: int) -> str:
        return "".join(rnd.choice(alphabet) for _ in range(n))

    def b64url(raw: str) -> str:
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    pem_body = "\n".join(pick(B64, 64) for _ in range(6))
    return {
        "aws-access-key": "AKIA" + pick(string.ascii_uppercase + "234567", 16),
        "google-api-key": "AIza" + pick(URLSAFE, 35),
        "github-token": "ghp_" + pick(ALNUM, 36),
        "github-fine-grained-token": "github_pat_" + pick(ALNUM, 22) + "_" + pick(ALNUM, 59),
        "github-app-token": "ghs_" + pick(ALNUM, 36),
        "gitlab-token": "glpat-" + pick(URLSAFE, 20),
        "npm-token": "npm_" + pick(ALNUM, 36),
        "pypi-token": "pypi-AgEIcHlwaS5vcmc" + pick(URLSAFE, 60),
        "slack-token": "xoxb-" + pick(string.digits, 12) + "-" + pick(string.digits, 13) + "-" + pick(ALNUM, 24),
        "telegram-bot-token": pick(string.digits, 10) + ":AA" + pick(URLSAFE, 33),
        "stripe-key": "sk_live_" + pick(ALNUM, 24),
        "openai-key": "sk-proj-" + pick(URLSAFE, 20) + "T3BlbkFJ" + pick(URLSAFE, 20),
        "anthropic-key": "sk-ant-api03-" + pick(URLSAFE, 93) + "AA",
        "huggingface-token": "hf_" + pick(string.ascii_letters, 34),
        "jwt": "eyJ" + b64url('{"alg":"HS256","typ":"JWT"}')[3:] + "." + b64url('{"sub":"' + pick(ALNUM, 12) + '"}')
        + "." + pick(URLSAFE, 43),
        "private-key": "-----BEGIN RSA PRIVATE KEY-----\n" + pem_body + "\n-----END RSA PRIVATE KEY-----",
        "azure-storage-key": pick(B64, 86) + "==",
        "url-password": pick(ALNUM, 18),
        "assigned-secret": pick(ALNUM, 28),
    }  # fmt: skip


def in_context(kind: str, secret: str) -> str:
    """The secret as it would appear in a session: pasted, exported, in a connection string."""
    if kind == "url-password":
        return f"postgresql://app:{secret}@db.internal:5432/prod"
    if kind == "assigned-secret":
        return f"DEPLOY_SECRET={secret}"
    if kind == "azure-storage-key":
        return f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={secret};EndpointSuffix=core.windows.net"
    return f"export VALUE='{secret}'"
