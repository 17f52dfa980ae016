"""The MCP server: Foldline's transcripts as tools an agent calls, over streamable HTTP (``/mcp``
on ``foldline serve``, :mod:`.http`) and stdio (``foldline mcp``, :mod:`.server`).

:mod:`.tools` answers each tool by calling :class:`~foldline.service.Transcripts` (the same
access checks as the HTTP API), every answer bounded (:mod:`.answers`); :mod:`.server` declares
the tools to the SDK and says who is calling.
"""
