"""A Server-Sent Events reader for the run event stream (text/event-stream, line by line)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional


@dataclass
class ServerSentEvent:
    event: str = "message"
    data: str = ""
    id: Optional[str] = None


@dataclass
class SSEDecoder:
    """SSEDecoder takes lines (without their line break) and returns an event at each blank line."""

    _event: Optional[str] = None
    _data: List[str] = field(default_factory=list)
    _id: Optional[str] = None

    def decode(self, line: str) -> Optional[ServerSentEvent]:
        if line == "":
            if self._event is None and not self._data and self._id is None:
                return None
            event = ServerSentEvent(self._event or "message", "\n".join(self._data), self._id)
            self._event, self._data, self._id = None, [], None
            return event
        if line.startswith(":"):
            return None  # a comment: the API's keep-alive
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self._id = value
        return None
