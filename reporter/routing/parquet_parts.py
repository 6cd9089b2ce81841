"""routing.parquet encoded in parts and joined without re-encoding (issue 35, item 2).

Encoding the routing table's nested columns (lists of rule ids, evidence
structs) is most of what the caller of a parallel route does alone
(docs/scale.md). So whoever routes a piece encodes the routing table's row
groups that lie wholly inside it (`encode_groups`: an in-memory Parquet file
of those groups, written exactly as the caller's writer would write them),
and the caller joins the parts (`PartsWriter`): it copies each part's column
chunks as they are and writes one footer listing every row group.

The bytes are those of one `pq.ParquetWriter` writing the whole table in row
groups of the same size: a Parquet row group is self-contained (each column
chunk's pages carry their own dictionary, statistics and sizes, no absolute
offset), and the only absolute offsets of the file are in its footer, which
is re-encoded here with those offsets moved by where the part's chunks now
lie (Thrift's compact protocol, the footer's encoding: `_decode`, `_encode`).
A footer this module cannot re-encode to its very bytes is refused (a
ValueError) instead of written differently; tests/test_routing_parts.py
compares joined files with one writer's, byte for byte.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .routing_table import ROUTING_SCHEMA

MAGIC = b"PAR1"
_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)

# Footer fields holding absolute file offsets (parquet.thrift): RowGroup.file_offset (5); ColumnChunk.file_offset
# (2: deprecated, 0 as Arrow writes it, and then left 0), offset_index_offset (4), column_index_offset (6);
# ColumnMetaData data_page_offset (9), index_page_offset (10), dictionary_page_offset (11), bloom_filter_offset
# (14). RowGroup.ordinal (7) is the group's position.
_RG_OFFSETS, _CC_OFFSETS, _CMD_OFFSETS = (5,), (2, 4, 6), (9, 10, 11, 14)
_RG_COLUMNS, _RG_ORDINAL, _CC_META = 1, 7, 3
_FMD_NUM_ROWS, _FMD_ROW_GROUPS = 3, 4


def encode_groups(table: pa.Table, group_rows: int) -> bytes:
    """A whole Parquet file of `table` in row groups of `group_rows`, written as routing.parquet is written."""
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, ROUTING_SCHEMA, compression="zstd") as writer:
        # One chunk per column: Parquet pages follow the chunks, so bytes would otherwise depend on batching.
        writer.write_table(table.combine_chunks(), row_group_size=group_rows)
    return sink.getvalue().to_pybytes()


class PartsWriter:
    """Writes one Parquet file from encoded parts (`encode_groups`'s files), in the order they are added."""

    def __init__(self, path: Path):
        self.file = open(path, "wb")  # noqa: SIM115 - closed by close()
        self.file.write(MAGIC)
        self.offset = len(MAGIC)
        self.groups: list[list] = []
        self.rows = 0
        self.template: list | None = None

    def add(self, part: bytes) -> None:
        """Append the row groups of one encoded part."""
        meta, body = _split(part)
        shift = self.offset - len(MAGIC)
        for group in _field(meta, _FMD_ROW_GROUPS, (_STRUCT, []))[1]:
            _shift(group, _RG_OFFSETS, shift)
            for chunk in _field(group, _RG_COLUMNS)[1]:
                _shift(chunk, _CC_OFFSETS, shift)
                _shift(_field(chunk, _CC_META), _CMD_OFFSETS, shift)
            ordinal = _find(group, _RG_ORDINAL)
            if ordinal is not None:
                ordinal[2] = len(self.groups)
            self.groups.append(group)
        self.rows += _field(meta, _FMD_NUM_ROWS)
        if self.template is None:
            self.template = meta
        self.file.write(body)
        self.offset += len(body)

    def close(self) -> None:
        """Write the footer (every part's row groups, the first part's schema and metadata) and close."""
        try:
            if self.template is None:
                raise ValueError("no part was added")
            meta = [list(f) for f in self.template]
            _find(meta, _FMD_NUM_ROWS)[2] = self.rows
            groups = _find(meta, _FMD_ROW_GROUPS)
            if groups is not None:
                groups[2] = (_STRUCT, self.groups)
            footer = _encode_struct(meta)
            self.file.write(footer + len(footer).to_bytes(4, "little") + MAGIC)
        finally:
            self.file.close()

    def abort(self) -> None:
        self.file.close()


class RoutingWriter:
    """Writes routing.parquet in row groups of exactly `group_rows` rows (release.ROW_GROUP_ROWS) (the last one shorter), in pool order.

    The row groups wholly inside a piece come encoded by whoever routed it
    (PieceResult.part); a group that straddles two pieces is put together
    from one piece's tail and the next one's head and encoded by a worker
    too, where the caller hands over a way to reach one (`use`), else here.
    Every part is joined in pool order without encoding anything again
    (PartsWriter). The bytes are those of one writer writing the whole table
    (tests/test_routing_parts.py).
    """

    def __init__(self, path: Path, group_rows: int):
        self.parts = PartsWriter(path)
        self.group_rows = group_rows
        self.pending: list[pa.Table] = []
        self.rows = 0
        self.encode: Callable[[pa.Table], Future] | None = None
        self.queue: deque[bytes | Future] = deque()
        """Encoded parts not yet written, in pool order: bytes, or a worker's future of them."""
        self.aborted = False

    def use(self, encode: Callable[[pa.Table], Future] | None) -> None:
        """Encode straddling row groups with `encode` (a worker pool's submit of `encode_groups(table,
        group_rows)`), or here again (None: the pool is closing, so the parts it encodes are waited for now)."""
        self.encode = encode
        if encode is None and not self.aborted:
            self._drain(wait=True)

    def write(self, table: pa.Table) -> None:
        """Rows routed here or shipped as rows: encoded in whole row groups as they fill."""
        self.add(table, None, table.schema.empty_table())

    def add(self, head: pa.Table, part: bytes | None, tail: pa.Table) -> None:
        """A piece's result: its head rows, its encoded row groups, its tail rows (PieceResult)."""
        if len(head) or (part is None and not len(tail)):  # an empty piece counts, as it did for one writer
            self._take(head)
        if part is not None:
            if self.rows:
                raise RuntimeError("a piece's row groups do not start at a routing.parquet row group")
            self._queue(part)
        if len(tail):
            self._take(tail)

    def _take(self, table: pa.Table) -> None:
        self.pending.append(table)
        self.rows += len(table)
        if self.rows >= self.group_rows:
            whole = pa.concat_tables(self.pending)
            cut = (self.rows // self.group_rows) * self.group_rows
            group = whole.slice(0, cut)
            if self.encode is None:
                self._queue(encode_groups(group, self.group_rows))
            else:  # copied: a slice would take the whole table's buffers along to the worker
                self._queue(self.encode(pa.concat_tables([group, group.schema.empty_table()]).combine_chunks()))
            rest = whole.slice(cut)
            self.pending, self.rows = ([rest] if len(rest) else []), len(rest)

    def _queue(self, part: bytes | Future) -> None:
        self.queue.append(part)
        self._drain(wait=False)

    def _drain(self, wait: bool) -> None:
        """Write the parts at the front of the queue that are ready (all of them, waiting, with `wait`)."""
        while self.queue:
            part = self.queue[0]
            if isinstance(part, Future):
                if not (wait or part.done()):
                    return
                part = part.result()
            self.queue.popleft()
            self.parts.add(part)

    def close(self) -> None:
        self._drain(wait=True)
        # As one writer did: the rows left (none: an empty row group) unless an empty piece came last.
        if self.rows or not self.pending:
            tail = pa.concat_tables(self.pending) if self.pending else ROUTING_SCHEMA.empty_table()
            self.parts.add(encode_groups(tail, self.group_rows))
        elif self.parts.template is None:  # only empty pieces: a file without row groups
            sink = pa.BufferOutputStream()
            pq.ParquetWriter(sink, ROUTING_SCHEMA, compression="zstd").close()
            self.parts.add(sink.getvalue().to_pybytes())
        self.parts.close()

    def abort(self) -> None:
        self.aborted = True
        self.queue.clear()
        self.parts.abort()


def _split(part: bytes) -> tuple[list, bytes]:
    """A part's decoded footer and the bytes of its row groups."""
    if part[:4] != MAGIC or part[-4:] != MAGIC:
        raise ValueError("not a Parquet file")
    size = int.from_bytes(part[-8:-4], "little")
    footer = part[-8 - size:-8]
    meta, end = _decode_struct(footer, 0)
    if end != len(footer) or _encode_struct(meta) != footer:
        raise ValueError("a Parquet footer this writer cannot re-encode to its own bytes")
    return meta, part[4:-8 - size]


def _find(struct: list, fid: int) -> list | None:
    for f in struct:
        if f[0] == fid:
            return f
    return None


def _field(struct: list, fid: int, default=None):
    f = _find(struct, fid)
    return default if f is None else f[2]


def _shift(struct: list, fids: tuple[int, ...], by: int) -> None:
    for f in struct:
        if f[0] in fids and f[2]:
            f[2] += by


# Thrift compact protocol: a struct is a list of [field id, compact type, value]; a list or set is
# (element type, [values]); a map is (key type, value type, [(k, v)]); a bool field's value is its type.

def _varint(data: bytes, at: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        b = data[at]
        at += 1
        out |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return out, at


def _zigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _decode_value(data: bytes, at: int, kind: int):
    if kind in (_TRUE, _FALSE):  # a bool element of a list or set: one byte
        return data[at], at + 1
    if kind == _BYTE:
        return data[at], at + 1
    if kind in (_I16, _I32, _I64):
        n, at = _varint(data, at)
        return _zigzag(n), at
    if kind == _DOUBLE:
        return data[at:at + 8], at + 8
    if kind == _BINARY:
        n, at = _varint(data, at)
        return data[at:at + n], at + n
    if kind in (_LIST, _SET):
        head = data[at]
        at += 1
        size, elem = head >> 4, head & 0x0F
        if size == 15:
            size, at = _varint(data, at)
        items = []
        for _ in range(size):
            v, at = _decode_value(data, at, elem)
            items.append(v)
        return (elem, items), at
    if kind == _MAP:
        size, at = _varint(data, at)
        if not size:
            return (0, 0, []), at
        kv = data[at]
        at += 1
        pairs = []
        for _ in range(size):
            k, at = _decode_value(data, at, kv >> 4)
            v, at = _decode_value(data, at, kv & 0x0F)
            pairs.append((k, v))
        return (kv >> 4, kv & 0x0F, pairs), at
    if kind == _STRUCT:
        return _decode_struct(data, at)
    raise ValueError(f"unknown Thrift compact type {kind}")


def _decode_struct(data: bytes, at: int) -> tuple[list, int]:
    fields, last = [], 0
    while True:
        head = data[at]
        at += 1
        if head == _STOP:
            return fields, at
        kind, delta = head & 0x0F, head >> 4
        if delta:
            fid = last + delta
        else:
            n, at = _varint(data, at)
            fid = _zigzag(n)
        if kind in (_TRUE, _FALSE):
            value = kind
        else:
            value, at = _decode_value(data, at, kind)
        fields.append([fid, kind, value])
        last = fid


def _put_varint(out: bytearray, n: int) -> None:
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return


def _encode_value(out: bytearray, kind: int, value) -> None:
    if kind in (_TRUE, _FALSE, _BYTE):
        out.append(value)
    elif kind in (_I16, _I32, _I64):
        _put_varint(out, (value << 1) ^ (value >> 63))
    elif kind == _DOUBLE:
        out += value
    elif kind == _BINARY:
        _put_varint(out, len(value))
        out += value
    elif kind in (_LIST, _SET):
        elem, items = value
        if len(items) < 15:
            out.append(len(items) << 4 | elem)
        else:
            out.append(0xF0 | elem)
            _put_varint(out, len(items))
        for v in items:
            _encode_value(out, elem, v)
    elif kind == _MAP:
        kt, vt, pairs = value
        _put_varint(out, len(pairs))
        if pairs:
            out.append(kt << 4 | vt)
            for k, v in pairs:
                _encode_value(out, kt, k)
                _encode_value(out, vt, v)
    elif kind == _STRUCT:
        _encode_into(out, value)
    else:
        raise ValueError(f"unknown Thrift compact type {kind}")


def _encode_into(out: bytearray, fields: list) -> None:
    last = 0
    for fid, kind, value in fields:
        if 0 < fid - last <= 15:
            out.append((fid - last) << 4 | kind)
        else:
            out.append(kind)
            _put_varint(out, (fid << 1) ^ (fid >> 63))
        if kind not in (_TRUE, _FALSE):
            _encode_value(out, kind, value)
        last = fid
    out.append(_STOP)


def _encode_struct(fields: list) -> bytes:
    out = bytearray()
    _encode_into(out, fields)
    return bytes(out)
