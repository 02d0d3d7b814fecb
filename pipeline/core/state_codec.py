"""A safe, exact JSON form for rating state checkpoints (no pickle: checkpoints are data)."""

from __future__ import annotations

import base64
import datetime as dt
import json
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa

_TAG = "$"


def to_jsonable(value: Any) -> Any:
    """Value as plain JSON types; Decimal, date and tuple are tagged so they come back exactly."""
    if isinstance(value, np.ndarray):
        # Raw little-endian bytes: exact, compact, and no pickle (object arrays are refused).
        if value.dtype.kind not in "biuf":
            raise TypeError(f"numpy arrays of dtype {value.dtype} cannot be checkpointed")
        data = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<"))
        return {
            _TAG: "nd",
            "dtype": data.dtype.str,
            "shape": list(value.shape),
            "v": base64.b64encode(data.tobytes()).decode("ascii"),
        }
    if isinstance(value, pa.Table):
        # Arrow IPC: columnar data with its schema, exact and fast for tables of many players.
        return {_TAG: "arrow", "v": _ipc(value)}
    if isinstance(value, (pa.Array, pa.ChunkedArray)):
        # A column of many players (their ids): as IPC too, not one JSON value per player.
        return {_TAG: "arrow_array", "v": _ipc(pa.table({"v": value}))}
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value  # json writes repr(), which round-trips a float64 exactly
    if isinstance(value, Decimal):
        return {_TAG: "dec", "v": str(value)}
    if isinstance(value, dt.date):
        return {_TAG: "date", "v": value.isoformat()}
    if isinstance(value, tuple):
        return {_TAG: "tuple", "v": [to_jsonable(v) for v in value]}
    if isinstance(value, list):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {_TAG: "dict", "v": {k: to_jsonable(v) for k, v in value.items()}}
        return {_TAG: "pairs", "v": [[to_jsonable(k), to_jsonable(v)] for k, v in value.items()]}
    raise TypeError(f"state value of type {type(value).__name__} cannot be checkpointed")


def _ipc(table: pa.Table) -> str:
    # Each column copied into buffers of its exact size: IPC writes an array's whole buffers,
    # so ids in a buffer with room for more would give other bytes for the same values.
    exact = pa.Table.from_arrays(
        [pa.concat_arrays([*column.chunks, pa.array([], column.type)]) for column in table.columns], schema=table.schema
    )
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, exact.schema) as writer:
        writer.write_table(exact)
    return base64.b64encode(sink.getvalue().to_pybytes()).decode("ascii")


def from_jsonable(value: Any) -> Any:
    """Inverse of to_jsonable."""
    if isinstance(value, list):
        return [from_jsonable(v) for v in value]
    if isinstance(value, dict):
        tag = value.get(_TAG)
        payload: Any = value.get("v")
        if tag == "dec":
            return Decimal(payload)
        if tag == "date":
            return dt.date.fromisoformat(payload)
        if tag == "tuple":
            return tuple(from_jsonable(v) for v in payload)
        if tag == "dict":
            return {k: from_jsonable(v) for k, v in payload.items()}
        if tag == "nd":
            raw = base64.b64decode(payload)
            return np.frombuffer(raw, dtype=np.dtype(value["dtype"])).reshape(value["shape"]).copy()
        if tag == "arrow":
            return pa.ipc.open_stream(base64.b64decode(payload)).read_all()
        if tag == "arrow_array":
            return pa.ipc.open_stream(base64.b64decode(payload)).read_all().column(0).combine_chunks()
        if tag == "pairs":
            return {from_jsonable(k): from_jsonable(v) for k, v in payload}
        raise ValueError(f"unknown checkpoint tag {tag!r}")
    return value


def dumps(value: Any) -> bytes:
    """Deterministic bytes of a state tree."""
    return json.dumps(to_jsonable(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def loads(data: bytes) -> Any:
    return from_jsonable(json.loads(data))
