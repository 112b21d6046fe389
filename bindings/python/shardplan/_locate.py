"""Where RFC 6901 JSON pointers point in a JSON text, as line and column.

A port of the engine's ``LocatePointers`` (core/text/json_locate.h), for the
``DOC:LINE:COL`` of ``python -m shardplan check``'s text: the same positions
as the ``shardplan`` command line prints, for any text, valid or not. It works
on the document's bytes:

    >>> locate_pointers(b'{\\n  "a": [1, 2]\\n}', [b"/a/1", b"/b", b""])
    [(2, 12), None, (1, 1)]

A position is (line, column), both 1-based; lines end at ``\\n``; the column
counts code points (every byte that is not a UTF-8 continuation byte). A
pointer's position is where its value's declaration starts: an object
member's key, an array element's first character, or the document's first
character after whitespace for ``""``. None where the pointer is not one, names
nothing, or the text is not JSON (RFC 8259) up to that value. Keys are compared
after decoding their escapes; of duplicate keys, the first wins. One pass that
descends only into the values some pointer goes into; nothing recurses.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

_SPACE = re.compile(rb"[ \t\n\r]*")
# Unambiguous (each alternative starts with a different byte), so a string
# that does not end fails in linear time.
_STRING = re.compile(rb'"[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9A-Fa-f]{4})[^"\\\x00-\x1f]*)*"')
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_ESCAPE = re.compile(rb'\\(?:u([0-9A-Fa-f]{4})|(["\\/bfnrt]))')
_CONTINUATION = bytes(range(0x80, 0xC0))
_LETTERS = {b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t"}
_OPEN_OBJECT, _OPEN_ARRAY, _CLOSE_OBJECT, _CLOSE_ARRAY = 0x7B, 0x5B, 0x7D, 0x5D
_COMMA, _COLON = 0x2C, 0x3A
_VALUE_STARTS = frozenset(b'{["tfn-0123456789')


def space_end(s: bytes, p: int) -> int:
    return _SPACE.match(s, p).end()


def string_end(s: bytes, p: Optional[int]) -> Optional[int]:
    """The offset past the string at ``p``; None where there is none."""
    if p is None:
        return None
    m = _STRING.match(s, p)
    return m.end() if m else None


def _colon_end(s: bytes, p: Optional[int]) -> Optional[int]:
    """After an object's key: whitespace, the colon, whitespace."""
    if p is None:
        return None
    p = space_end(s, p)
    return space_end(s, p + 1) if p < len(s) and s[p] == _COLON else None


def _scalar_end(s: bytes, p: int) -> Optional[int]:
    if p >= len(s):
        return None
    c = s[p]
    if c == 0x22:
        return string_end(s, p)
    for word in (b"true", b"false", b"null"):
        if c == word[0]:
            return p + len(word) if s.startswith(word, p) else None
    m = _NUMBER.match(s, p)
    return m.end() if m else None


def value_end(s: bytes, p: int) -> Optional[int]:
    """The offset past the value at ``p`` (arrays and objects whole), or None
    where it is not JSON. Containers nest on a list, not the call stack."""
    n = len(s)
    open_: List[bool] = []  # True: an object
    while True:
        # A value starts at p.
        if p < n and s[p] in (_OPEN_OBJECT, _OPEN_ARRAY):
            is_object = s[p] == _OPEN_OBJECT
            p = space_end(s, p + 1)
            if p < n and s[p] == (_CLOSE_OBJECT if is_object else _CLOSE_ARRAY):
                p += 1
            else:
                open_.append(is_object)
                if is_object:
                    p = _colon_end(s, string_end(s, p))
                    if p is None:
                        return None
                continue
        else:
            p = _scalar_end(s, p)
            if p is None:
                return None
        # After a value: close containers until a comma leads to the next value.
        while True:
            if not open_:
                return p
            p = space_end(s, p)
            if p == n:
                return None
            if s[p] == _COMMA:
                p = space_end(s, p + 1)
                if open_[-1]:
                    p = _colon_end(s, string_end(s, p))
                    if p is None:
                        return None
                break
            if s[p] != (_CLOSE_OBJECT if open_[-1] else _CLOSE_ARRAY):
                return None
            p += 1
            open_.pop()


def _split_pointer(pointer: bytes) -> Optional[List[bytes]]:
    """The decoded reference tokens ("~1" -> "/", "~0" -> "~"), or None when
    ``pointer`` is not an RFC 6901 pointer."""
    if not pointer:
        return []
    if pointer[:1] != b"/":
        return None
    tokens = pointer[1:].split(b"/")
    for token in tokens:
        if re.search(rb"~(?![01])", token):
            return None
    return [t.replace(b"~1", b"/").replace(b"~0", b"~") for t in tokens]


def _array_index(token: bytes) -> Optional[int]:
    if not token or not token.isdigit() or (token[:1] == b"0" and len(token) > 1):
        return None
    return int(token)


def _unescape(raw: bytes) -> Optional[bytes]:
    """A key's contents with its escapes decoded (UTF-8); None where a \\u
    escape is a lone surrogate, which no token can match."""
    out = bytearray()
    pos = 0
    escapes = list(_ESCAPE.finditer(raw))
    k = 0
    while k < len(escapes):
        m = escapes[k]
        out += raw[pos : m.start()]
        pos = m.end()
        k += 1
        if m.group(2) is not None:
            out += _LETTERS.get(m.group(2), m.group(2))
            continue
        cp = int(m.group(1), 16)
        if 0xD800 <= cp <= 0xDFFF:
            # A high surrogate, then a \u escape of a low one, right after it.
            if cp >= 0xDC00 or k == len(escapes) or escapes[k].start() != pos or escapes[k].group(1) is None:
                return None
            low = int(escapes[k].group(1), 16)
            if not 0xDC00 <= low <= 0xDFFF:
                return None
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
            pos = escapes[k].end()
            k += 1
        out += chr(cp).encode("utf-8", "surrogatepass")
    out += raw[pos:]
    return bytes(out)


class _Node:
    __slots__ = ("targets", "children", "elements", "subtree", "reached")

    def __init__(self) -> None:
        self.targets: List[int] = []  # the pointers that end here
        self.children: Dict[bytes, int] = {}  # by token
        self.elements: List[Tuple[int, int]] = []  # (array index, child), by index
        self.subtree = 0  # how many pointers end here or below
        self.reached = False  # its declaration was found


def _trie(pointers: Sequence[bytes]) -> List[_Node]:
    nodes = [_Node()]
    for i, pointer in enumerate(pointers):
        tokens = _split_pointer(pointer)
        if tokens is None:
            continue
        node = 0
        nodes[node].subtree += 1
        for token in tokens:
            child = nodes[node].children.get(token)
            if child is None:
                child = nodes[node].children[token] = len(nodes)
                nodes.append(_Node())
            node = child
            nodes[node].subtree += 1
        nodes[node].targets.append(i)
    for node in nodes:
        node.elements = sorted(
            (index, child) for token, child in node.children.items() if (index := _array_index(token)) is not None
        )
    return nodes


class _Frame:
    __slots__ = ("node", "is_object", "count", "next_element")

    def __init__(self, node: int, is_object: bool) -> None:
        self.node, self.is_object, self.count, self.next_element = node, is_object, 0, 0


class _Locator:
    def __init__(self, text: bytes, nodes: List[_Node], offsets: List[Optional[int]]) -> None:
        self.s, self.nodes, self.offsets = text, nodes, offsets
        self.remaining = nodes[0].subtree  # pointers neither found nor known to name nothing
        self.p = 0
        self.frames: List[_Frame] = []

    def run(self) -> None:
        s, n = self.s, len(self.s)
        if self.remaining == 0:
            return
        self.p = space_end(s, 0)
        if self.p == n or s[self.p] not in _VALUE_STARTS:
            return
        self._record(0, self.p)
        if not self._value(0):
            return
        while self.remaining > 0 and self.frames:
            frame = self.frames[-1]
            p = self.p = space_end(s, self.p)
            if p == n:
                return
            if s[p] == (_CLOSE_OBJECT if frame.is_object else _CLOSE_ARRAY):
                self.p = p + 1
                self._close()
                continue
            if frame.count > 0:
                if s[p] != _COMMA:
                    return
                p = self.p = space_end(s, p + 1)
            declared_at = p
            if frame.is_object:
                key_end = string_end(s, p)
                if key_end is None:
                    return
                want = self._match_key(frame.node, s[p + 1 : key_end - 1])
                p = _colon_end(s, key_end)
                if p is None:
                    return
                self.p = p
            else:
                want = self._match_element(frame)
            frame.count += 1
            if want is not None:
                if p == n or s[p] not in _VALUE_STARTS:
                    return
                self._record(want, declared_at)
            if not self._value(want):
                return

    def _record(self, node: int, at: int) -> None:
        target = self.nodes[node]
        target.reached = True
        for i in target.targets:
            self.offsets[i] = at
        self.remaining -= len(target.targets)

    def _value(self, want: Optional[int]) -> bool:
        s, p = self.s, self.p
        if want is not None and self.nodes[want].children and p < len(s) and s[p] in (_OPEN_OBJECT, _OPEN_ARRAY):
            self.frames.append(_Frame(want, s[p] == _OPEN_OBJECT))
            self.p = p + 1
            return True
        # The pointers below a value not descended into name nothing.
        if want is not None:
            self.remaining -= self.nodes[want].subtree - len(self.nodes[want].targets)
        end = value_end(s, p)
        if end is None:
            return False
        self.p = end
        return True

    def _close(self) -> None:
        for child in self.nodes[self.frames[-1].node].children.values():
            if not self.nodes[child].reached:
                self.remaining -= self.nodes[child].subtree
        self.frames.pop()

    def _match_key(self, node: int, raw: bytes) -> Optional[int]:
        key: Optional[bytes] = raw
        if b"\\" in raw:
            key = _unescape(raw)
            if key is None:
                return None
        child = self.nodes[node].children.get(key)
        if child is None or self.nodes[child].reached:
            return None
        return child

    def _match_element(self, frame: _Frame) -> Optional[int]:
        elements = self.nodes[frame.node].elements
        if frame.next_element == len(elements) or elements[frame.next_element][0] != frame.count:
            return None
        frame.next_element += 1
        return elements[frame.next_element - 1][1]


def locate_pointers(text: bytes, pointers: Sequence[bytes]) -> List[Optional[Tuple[int, int]]]:
    """For each of ``pointers`` (bytes, UTF-8), (line, column) of where its
    value's declaration starts in ``text``, or None (see the module's doc)."""
    nodes = _trie(pointers)
    offsets: List[Optional[int]] = [None] * len(pointers)
    _Locator(text, nodes, offsets).run()
    positions: List[Optional[Tuple[int, int]]] = []
    for offset in offsets:
        if offset is None:
            positions.append(None)
            continue
        line_start = text.rfind(b"\n", 0, offset) + 1
        column = 1 + len(text[line_start:offset].translate(None, _CONTINUATION))
        positions.append((1 + text.count(b"\n", 0, offset), column))
    return positions
