"""Text that fits: how wide a label is in the font matplotlib draws it with, a label cut to a
width, and the TeX fragments of protocol labels (``c^{d_i}``) as mathtext or HTML.

Used by the sequence diagram (:mod:`ppnn.sequence`) to size its lanes to their labels, and by
the protocol player (:mod:`ppnn.widgets`) for the same labels in HTML. Widths are in inches
(72 points), from the fonts' unhinted advances -- what a browser draws an SVG's text with.
"""

from __future__ import annotations

import functools
import html
import re

__all__ = ["text_width", "fit", "fit_lines", "two_line_width", "math_text", "math_html",
           "has_tex"]

#: a word with a TeX sub- or superscript group in braces: ``c^{d_i}``, ``Z_{2^{16}}``
_TEX = re.compile(r"[A-Za-z0-9]+(?:[\^_](?:\{(?:[^{}]|\{[^{}]*\})*\}|[A-Za-z0-9]))+")
_ELLIPSIS = "\u2026"


def has_tex(text: str) -> bool:
    """Whether ``text`` holds a TeX fragment with a braced group (``c^{d_i}``)."""
    return any("{" in m.group(0) for m in _TEX.finditer(text))


def math_text(text: str) -> str:
    """``text`` for matplotlib: its TeX fragments (``c^{d_i}``) as mathtext (``$c^{d_i}$``),
    every other ``$`` escaped so it is drawn as it is."""
    out, last = [], 0
    for m in _TEX.finditer(text):
        if "{" not in m.group(0):
            continue
        out.append(text[last:m.start()].replace("$", r"\$"))
        out.append(f"${m.group(0)}$")
        last = m.end()
    out.append(text[last:].replace("$", r"\$"))
    return "".join(out)


def _tex_html(frag: str) -> str:
    """One TeX fragment as HTML: ``^{...}`` / ``^c`` as <sup>, ``_{...}`` / ``_c`` as <sub>."""
    out, i = [], 0
    while i < len(frag):
        c = frag[i]
        if c in "^_" and i + 1 < len(frag):
            tag = "sup" if c == "^" else "sub"
            if frag[i + 1] == "{":
                depth, j = 0, i + 1
                while j < len(frag):
                    depth += {"{": 1, "}": -1}.get(frag[j], 0)
                    if depth == 0:
                        break
                    j += 1
                inner, i = frag[i + 2:j], j + 1
            else:
                inner, i = frag[i + 1], i + 2
            out.append(f"<{tag}>{_tex_html(inner)}</{tag}>")
        else:
            out.append(html.escape(c))
            i += 1
    return "".join(out)


def math_html(text: str) -> str:
    """``text`` as HTML (escaped), its TeX fragments as sub- and superscripts
    (``c^{d_i}`` -> ``c<sup>d<sub>i</sub></sup>``)."""
    out, last = [], 0
    for m in _TEX.finditer(text):
        if "{" not in m.group(0):
            continue
        out.append(html.escape(text[last:m.start()]))
        out.append(_tex_html(m.group(0)))
        last = m.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


@functools.lru_cache(maxsize=8)
def _font_path(mono: bool, bold: bool) -> str:
    from matplotlib.font_manager import FontProperties, findfont

    return findfont(FontProperties(family="monospace" if mono else "sans-serif",
                                   weight="bold" if bold else "normal"))


@functools.lru_cache(maxsize=4096)
def _advance(path: str, ch: str) -> float:
    """The advance of ``ch`` at 1 pt, in points (unhinted, as a browser lays out text)."""
    from matplotlib.font_manager import get_font
    from matplotlib.ft2font import LoadFlags

    font = get_font(path)
    font.set_size(100, 72)
    glyph = font.load_char(ord(ch), flags=LoadFlags.NO_HINTING)
    return glyph.linearHoriAdvance / 65536 / 100


@functools.lru_cache(maxsize=1024)
def _math_width(text: str, size: float) -> float:
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.font_manager import FontProperties

    w, _, _ = RendererAgg(10, 10, 72).get_text_width_height_descent(
        text, FontProperties(size=size), ismath=True)
    return w / 72


def text_width(text: str, size: float, mono: bool = False, bold: bool = False) -> float:
    """The width of ``text`` at ``size`` points, in inches (mathtext fragments included)."""
    if has_tex(text):
        return _math_width(math_text(text), size) * (1.1 if bold else 1.0)
    path = _font_path(mono, bold)
    return size * sum(_advance(path, c) for c in text) / 72


def fit(text: str, width: float, size: float, mono: bool = False, bold: bool = False
        ) -> tuple[str, bool]:
    """``(text, False)`` when it is at most ``width`` inches wide, else its longest prefix
    that fits with an ellipsis, and True (a label with TeX is cut as plain text)."""
    if text_width(text, size, mono, bold) <= width:
        return text, False
    lo, hi = 0, len(text)  # the longest prefix that fits: lo fits, hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if text_width(text[:mid].rstrip() + _ELLIPSIS, size, mono, bold) <= width:
            lo = mid
        else:
            hi = mid
    return text[:lo].rstrip() + _ELLIPSIS, True


def two_line_width(text: str, size: float, mono: bool = False) -> float:
    """The narrowest width (inches) ``text`` fits in on at most two lines, broken at a
    space."""
    best = text_width(text, size, mono)
    for i, c in enumerate(text):
        if c == " ":
            best = min(best, max(text_width(text[:i], size, mono),
                                 text_width(text[i + 1:], size, mono)))
    return best


def fit_lines(text: str, width: float, size: float, mono: bool = False, lines: int = 2
              ) -> tuple[list[str], bool]:
    """``text`` broken at spaces into at most ``lines`` lines of at most ``width`` inches
    (the last one cut with an ellipsis when the rest does not fit), and whether it was
    cut."""
    if text_width(text, size, mono) <= width:
        return [text], False
    out, rest = [], text
    while len(out) < lines - 1:
        words, line = rest.split(" "), ""
        k = 0
        while k < len(words) and text_width(f"{line} {words[k]}".lstrip(), size, mono) <= width:
            line = f"{line} {words[k]}".lstrip()
            k += 1
        if not line:  # one word wider than the line: cut it
            break
        out.append(line)
        rest = " ".join(words[k:])
        if text_width(rest, size, mono) <= width:
            return [*out, rest], False
    last, cut = fit(rest, width, size, mono)
    return [*out, last], cut
