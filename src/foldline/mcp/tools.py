"""The five tools, each an account's question to :class:`~foldline.service.Transcripts` and an
answer of at most :data:`~.answers.ANSWER_MAX` characters that says when it was cut and how to
read further (a smaller page, a cursor, a slice)."""

from __future__ import annotations

from typing import Any

from ..errors import BadRequest
from ..search.fields import searchable
from ..service import Transcripts
from ..wire import PAGE_LIMIT_MAX
from .answers import (
    ANSWER_MAX,
    FIELD_HEAD,
    HIT_CONTEXT,
    SLICE_MAX,
    fits,
    parse_window_cursor,
    stale,
    text_of,
    window_cursor,
)

Json = dict[str, Any]

SEARCH_LIMIT = 10  # results in a search answer unless asked
HIT_MATCHES = 20  # matches listed per result in an answer (its count says how many it holds)
SEARCH_LIMIT_MAX = 50
AGENTS_LIMIT = 20  # agents in a list_agents answer unless asked
WINDOW_LIMIT = 20  # messages in a read_transcript answer unless asked


def whole_number(value: Any, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadRequest(f"'{name}' is a whole number from {low} to {high}", where=name)
    return value


def smaller(limit: int, answer: Json) -> int:
    """A page size that should fit: ``limit`` scaled down by how far ``answer`` is over."""
    return max(1, min(limit - 1, limit * ANSWER_MAX // max(1, len(text_of(answer)))))


class Tools:
    """The tools' answers for one :class:`Transcripts`; each method takes the caller's account first."""

    def __init__(self, transcripts: Transcripts) -> None:
        self.t = transcripts

    def search(
        self,
        account: str,
        query: Any,
        workspace_id: str | None = None,
        agent_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Json:
        count = SEARCH_LIMIT if limit is None else whole_number(limit, "limit", 1, SEARCH_LIMIT_MAX)
        asked = count
        while True:
            found = self.t.search(account, query, workspace_id, agent_id, count, cursor)
            answer: Json = {"hits": [with_read(hit) for hit in found["hits"]], "next": found["next"]}
            if fits(answer) or count == 1:
                break
            count = smaller(count, answer)
        answer["cut"] = count < asked
        if answer["cut"]:
            answer["note"] = f"{count} hits of the {asked} asked fit in one answer; pass 'next' as 'cursor' for more"
        elif found["partial"]:
            answer["note"] = "the search ran out of time before this page was full; pass 'next' as 'cursor' to go on"
        return answer

    def list_agents(
        self, account: str, workspace_id: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> Json:
        count = AGENTS_LIMIT if limit is None else whole_number(limit, "limit", 1, 200)
        workspaces = self.t.me(account)["workspaces"]
        if workspace_id is None:
            if not workspaces:
                return {"agents": [], "next": None, "workspaces": [], "cut": False}
            workspace_id = workspaces[0]["id"]
        asked = count
        while True:
            found = self.t.list_agents(account, workspace_id, limit=str(count), cursor=cursor)
            answer: Json = {"workspace_id": workspace_id, "agents": found["agents"], "next": found["next"]}
            if fits(answer) or count == 1:
                break
            count = smaller(count, answer)
        answer["workspaces"] = [{"id": w["id"], "name": w["name"]} for w in workspaces]
        answer["cut"] = count < asked
        if answer["cut"]:
            answer["note"] = f"{count} agents of the {asked} asked fit in one answer; pass 'next' as 'cursor' for more"
        return answer

    def read_transcript(
        self, account: str, agent_id: str, call: str | None = None, before: str | None = None, limit: int | None = None
    ) -> Json:
        count = WINDOW_LIMIT if limit is None else whole_number(limit, "limit", 1, PAGE_LIMIT_MAX)
        position, made = (None, None) if before is None else parse_window_cursor(before)
        asked = count
        while True:
            page = self.t.messages(account, agent_id, call=call, cut=True, limit=count, before=position)
            if made is not None and page["seq"] != made:
                raise stale(made, page["seq"])
            following = None if page["next"] is None else window_cursor(page["next"], page["seq"])
            answer: Json = {"messages": page["messages"], "next": following, "seq": page["seq"]}
            if fits(answer) or count == 1:
                break
            count = smaller(count, answer)
        squeezed = not fits(answer)
        if squeezed:
            answer["messages"] = [squeeze(message, agent_id, call) for message in answer["messages"]]
        answer["cut"] = count < asked or squeezed
        notes = ["oldest first; pass 'next' as 'before' for the messages before these" if following else
                 "oldest first; these are the transcript's first messages"]  # fmt: skip
        if count < asked:
            notes.append(f"{count} messages of the {asked} asked fit in one answer")
        if squeezed:
            notes.append("parts that did not fit are 'omitted': read each with read_part")
        notes.append("a part listed in a message's cutParts is sent cut (head and tail): read its middle with "
                     "read_part and field, start, end")  # fmt: skip
        answer["note"] = "; ".join(notes)
        return answer

    def read_part(
        self,
        account: str,
        agent_id: str,
        message_id: str,
        part: int,
        call: str | None = None,
        field: str | None = None,
        start: int | None = None,
        end: int | None = None,
    ) -> Json:
        index = whole_number(part, "part", 0, 2**31 - 1)
        if field is None:
            if start is not None or end is not None:
                raise BadRequest("'start' and 'end' slice a 'field'; name the field", where="field")
            return self.whole_part(account, agent_id, message_id, index, call)
        first = 0 if start is None else whole_number(start, "start", 0, 2**53)
        last = first + SLICE_MAX if end is None else whole_number(end, "end", 0, 2**53)
        asked = last
        last = min(last, first + SLICE_MAX)
        while True:
            found = self.t.part_slice(account, agent_id, message_id, index, field, first, last, call)
            if fits(found) or last - first <= 1:
                break
            last = first + (last - first) // 2
        cut = found["end"] < min(asked, found["length"])
        found["cut"] = cut
        if found["end"] < found["length"]:
            more = {"field": field, "start": found["end"], "end": min(found["length"], found["end"] + SLICE_MAX)}
            found["more"] = more
            fit = " (all that fits in one answer)" if cut else ""
            found["note"] = (
                f"code points {found['start']} to {found['end']} of {found['length']}{fit}; "
                "call again with 'more' for the next"
            )
        return found

    def whole_part(self, account: str, agent_id: str, message_id: str, index: int, call: str | None) -> Json:
        part = self.t.part(account, agent_id, message_id, str(index), call)
        answer: Json = {"part": part, "cut": False}
        if fits(answer):
            return answer
        lengths = {name: len(text) for name, text in searchable(part)}
        shown = {key: value for key, value in part.items() if key not in lengths or lengths[key] <= FIELD_HEAD}
        heads = {name: text[:FIELD_HEAD] for name, text in searchable(part) if lengths[name] > FIELD_HEAD}
        note = (
            f"the part is too big for one answer: 'heads' holds the first {FIELD_HEAD} code points of each big "
            "field, 'lengths' every field's length; read the rest with field, start, end"
        )
        return {"part": shown, "heads": heads, "lengths": lengths, "cut": True, "note": note}

    def usage(self, account: str, by: str = "day") -> Json:
        found = self.t.usage(account, by)
        rows = found["rows"]
        answer: Json = {"by": by, "rows": rows, "total": found["total"], "cut": False}
        while not fits(answer) and answer["rows"]:
            answer["rows"] = answer["rows"][: len(answer["rows"]) // 2]
        if len(answer["rows"]) < len(rows):
            answer["cut"] = True
            answer["note"] = f"the first {len(answer['rows'])} of {len(rows)} rows; 'total' counts them all"
        return answer


def with_read(hit: Json) -> Json:
    """A result (one field of one part), at most ``HIT_MATCHES`` of its matches listed (``count``
    says how many it has), and the read_part arguments that read the lines around its first
    match: the second call."""
    around = {
        "agent_id": hit["agent_id"],
        "message_id": hit["message_id"],
        "part": hit["part"],
        "field": hit["field"],
        "start": max(0, hit["start"] - HIT_CONTEXT),
        "end": hit["end"] + HIT_CONTEXT,
    }
    if hit["call"] is not None:
        around["call"] = hit["call"]
    return {**hit, "matches": hit["matches"][:HIT_MATCHES], "read_part": around}


def squeeze(message: Json, agent_id: str, call: str | None) -> Json:
    """A message too big for one answer: its parts kept while they fit, each other one a stub."""
    budget = ANSWER_MAX // 2
    parts = []
    for index, part in enumerate(message.get("parts", [])):
        size = len(text_of(part))
        if size <= budget:
            parts.append(part)
            budget -= size
            continue
        read = {"agent_id": agent_id, "message_id": message.get("id"), "part": index}
        if call is not None:
            read["call"] = call
        parts.append({"type": part.get("type"), "omitted": size, "read_part": read})
    return {**message, "parts": parts}
