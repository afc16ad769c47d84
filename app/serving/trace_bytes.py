"""One input's trace as bytes, kept once in the cache: the compact form, and the JSON and NDJSON made from it.

**The compact form** (`Accept: application/vnd.anatomy.trace` on /api/trace; the page's own client asks for
it) holds the same trace in about half the bytes and costs no number formatting on either side: an 8-byte
little-endian header length N, then N bytes of JSON (padded with spaces so that the data starts at a
multiple of 8), then the data. The JSON header is
`{"format": "anatomy-trace-compact/1", "head": <the trace without its nodes, as /api/trace sends it>,
"nodes": [<each node's id, op, inputs, attrs, shape and dtype>, …]}`; a float32 node has `data_offsets`
[start, end) into the data, which holds its values as little-endian float32 in row-major order (−∞ stays
−∞: JSON's null), and any other node (token ids, masks) has its `data` written in the header as JSON
writes it. The page (static/js/compact.js) reads the float32 values straight into Float32Arrays: the very
float32s whose shortest digits the JSON form writes.

**The JSON body and the NDJSON stream** are made from the compact form when a client first asks for them
(their bytes are exactly those of serialising each node with `dumps`, tests/service/test_trace_bytes.py): a cold
trace asked for in compact form never pays for formatting 55 000 numbers as text.
"""

from __future__ import annotations

import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import orjson

from app.documents.schemas import ServedTraceHeader
from app.serving.delivery import brotli_writes, ndjson_writes, precompress
from app.serving.serialize import dumps
from recorder import Node
from recorder.graph import dtype_name

COMPACT_FORMAT = "anatomy-trace-compact/1"
ALIGN = 8


def compact_body(header: ServedTraceHeader, nodes: list[Node]) -> tuple[bytes, tuple[int, int], tuple[int, int]]:
    """The compact form of a trace, and where its header's `head` and `nodes` JSON lie in it."""
    metas, buffers, offset = [], [], 0
    for node in nodes:
        v = node.value
        meta = {
            "id": node.id,
            "op": node.op,
            "inputs": node.inputs,
            "attrs": node.attrs,
            "shape": list(v.shape),
            "dtype": dtype_name(v.dtype),
        }
        if v.dtype == np.float32:
            raw = np.ascontiguousarray(v, dtype="<f4").tobytes()
            meta["data_offsets"] = [offset, offset + len(raw)]
            buffers.append(raw)
            offset += len(raw)
        else:
            meta["data"] = np.ascontiguousarray(v).ravel()
        metas.append(meta)
    head, listed = dumps(header), dumps(metas)
    before_head = b'{"format":"' + COMPACT_FORMAT.encode() + b'","head":'
    text = before_head + head + b',"nodes":' + listed + b"}"
    text += b" " * (-(8 + len(text)) % ALIGN)
    head_at = 8 + len(before_head)
    nodes_at = head_at + len(head) + len(b',"nodes":')
    body = struct.pack("<Q", len(text)) + text + b"".join(buffers)
    return body, (head_at, head_at + len(head)), (nodes_at, nodes_at + len(listed))


def json_nodes(compact: bytes, nodes_span: tuple[int, int]) -> Iterator[bytes]:
    """Each node of a compact body as the JSON form writes it (`dumps(node.to_json())`, byte for byte)."""
    data_at = 8 + struct.unpack_from("<Q", compact)[0]
    for meta in orjson.loads(compact[nodes_span[0] : nodes_span[1]]):
        offsets = meta.pop("data_offsets", None)
        if offsets is not None:
            start, end = offsets
            meta["data"] = np.frombuffer(compact, dtype="<f4", count=(end - start) // 4, offset=data_at + start)
        yield dumps(meta)


@dataclass
class CachedTrace:
    """One input's trace, kept once: its compact form, and the JSON body (with each node's place in it, so
    the NDJSON stream is slices of the same bytes) made from it on first asking."""

    compact: bytes
    head_span: tuple[int, int]  # the header's JSON (everything but the nodes) in `compact`
    nodes_span: tuple[int, int]  # the nodes' listing in `compact`
    node_count: int
    br: bytes | None = None  # the JSON body Brotli-compressed, made on first asking (app/serving/delivery.py)
    br_writes: list[bytes] | None = None  # the NDJSON stream's writes, Brotli-compressed on first asking
    _json: tuple[bytes, list[tuple[int, int]]] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def build(cls, header: ServedTraceHeader, nodes: list[Node]) -> CachedTrace:
        compact, head_span, nodes_span = compact_body(header, nodes)
        return cls(compact, head_span, nodes_span, len(nodes))

    @property
    def nbytes(self) -> int:
        # the JSON body is about 1.7 times the compact form when made, its two Brotli copies each under 30 %
        # of it: all counted from the start, so the cache stays within its bound when they come
        return len(self.compact) * 4

    def _json_form(self) -> tuple[bytes, list[tuple[int, int]]]:
        with self._lock:  # made once: two requests at once would each spend a few ms on the same bytes
            if self._json is None:
                head = self.compact[self.head_span[0] : self.head_span[1]]
                body = bytearray(head[:-1] + b',"nodes":[')  # {…header fields…, "nodes": [node, …]}
                spans = []
                for i, node in enumerate(json_nodes(self.compact, self.nodes_span)):
                    if i:
                        body += b","
                    spans.append((len(body), len(body) + len(node)))
                    body += node
                body += b"]}"
                self._json = (bytes(body), spans)
            return self._json

    @property
    def body(self) -> bytes:
        """The trace as one JSON document (/api/trace's default form)."""
        return self._json_form()[0]

    @property
    def spans(self) -> list[tuple[int, int]]:
        """Each node's [start, end) in `body`."""
        return self._json_form()[1]

    @property
    def header(self) -> bytes:
        """The NDJSON stream's first line: the header's fields, then `node_count` (a TraceStreamHeader)."""
        head = self.compact[self.head_span[0] : self.head_span[1]]
        return head[:-1] + b',"node_count":' + str(self.node_count).encode() + b"}\n"

    def ndjson(self) -> Iterator[bytes]:
        yield self.header
        body, spans = self._json_form()
        view = memoryview(body)
        for start, end in spans:
            yield bytes(view[start:end]) + b"\n"

    def body_br(self) -> bytes:
        """The body as Brotli (made once; two threads racing make the same bytes)."""
        if self.br is None:
            self.br = precompress(self.body)
        return self.br

    def stream_br(self) -> list[bytes]:
        """The stream's writes as one Brotli stream (made once; two threads racing make the same bytes)."""
        if self.br_writes is None:
            self.br_writes = brotli_writes(ndjson_writes(self.ndjson()))
        return self.br_writes
