"""A streaming tool input is read as the AI SDK reads it: every prefix of varied JSON texts gives
what the SDK's own parsePartialJson gives (run by Node.js, tests/aisdk)."""

from __future__ import annotations

import json

from test_ai_sdk_stream import sdk

from foldline.partialjson import ABSENT, close, read_partial

TEXTS = [
    '{"command": "ls -la /srv && echo \\"done\\"", "timeout": 30}',
    '{"a": [1, -2.5e3, true, false, null, {"b": "c\\u00e9\\n"}], "d": {}, "e": []}',
    '[{"x": 1}, [2, [3]], "four", -0.5, 1E+2]',
    '  {"spaced" :  [ 1 , 2 ]  , "k":"v" }  ',
    '{"unicode": "\\u263a ok", "esc": "\\\\ \\/ \\t"}',  # (half a surrogate pair: JS keeps it, JSON here cannot)
    '"just a string"',
    "12345",
    "nul",
    '{"bad": tru',
    '{"key"',
]


def test_every_prefix_reads_as_the_sdk_reads_it() -> None:
    prefixes = sorted({text[:end] for text in TEXTS for end in range(len(text) + 1)})
    theirs = json.loads(sdk("partial", given=json.dumps(prefixes).encode()))
    for text, their in zip(prefixes, theirs, strict=True):
        mine = read_partial(text)
        assert (mine is ABSENT) == (len(their) == 1), (text, close(text), their)
        if mine is not ABSENT:
            assert mine == their[1], (text, close(text), their)
