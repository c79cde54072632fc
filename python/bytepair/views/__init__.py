"""Token views: the terminal view, the HTML view and the interactive report page."""

from __future__ import annotations

from bytepair.views.html import render_html, write_html
from bytepair.views.segments import Segment, colour, segments, visible
from bytepair.views.terminal import render_terminal

__all__ = ["Segment", "colour", "render_html", "render_terminal", "segments", "visible", "write_html"]
