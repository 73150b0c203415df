"""``Row`` and ``Column``: ipywidgets boxes whose static picture holds their children's, so a
layout of widgets still shows as a picture where widgets cannot run (nbconvert, GitHub)."""

from __future__ import annotations

import html

import ipywidgets as widgets

from irlab.widgets.picture import StaticPicture


def picture_of(widget) -> str:
    """The static picture of any widget: its own (``to_html``), its children's for a box,
    and for a control (a dropdown, a label) its description and value as text."""
    if hasattr(widget, "to_html"):
        return widget.to_html()
    if isinstance(widget, widgets.Box):
        return box_picture(widget.children, "column" if isinstance(widget, widgets.VBox)
                           else "row")
    text = " ".join(str(part) for part in (getattr(widget, "description", ""),
                                            getattr(widget, "value", "")) if part)
    return f"<span>{html.escape(text)}</span>" if text else ""


def box_picture(children, direction: str) -> str:
    cells = "".join(f'<div style="flex:1;min-width:0;overflow:auto">{picture}</div>'
                    for picture in map(picture_of, children) if picture)
    return f'<div style="display:flex;flex-direction:{direction};gap:12px">{cells}</div>'


class Row(StaticPicture, widgets.HBox):
    """Widgets side by side (an ``HBox``) whose static picture puts their pictures side by
    side too."""

    def to_html(self) -> str:
        return box_picture(self.children, "row")


class Column(StaticPicture, widgets.VBox):
    """Widgets one under the other (a ``VBox``) with their static pictures."""

    def to_html(self) -> str:
        return box_picture(self.children, "column")

