"""Checkpoint codec: every value kind comes back exactly, and the same state gives the same bytes."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from pipeline.core import state_codec


def test_every_kind_round_trips_exactly():
    ids = pa.array(["p1", None, "p\u00e9"], pa.string())
    state = {
        "month": (2020, 12),
        "when": dt.date(2020, 12, 31),
        "points": Decimal("12.35"),
        "pi": 0.1 + 0.2,
        "ratings": np.array([1.5, -2.25]),
        "slots": np.arange(6, dtype=np.int32).reshape(2, 3),
        "ids": ids,
        "sliced": ids.slice(1),
        "table": pa.table({"a": [1, 2]}),
        3: "non-text key",
    }
    back = state_codec.loads(state_codec.dumps(state))
    assert back["month"] == (2020, 12) and back["when"] == dt.date(2020, 12, 31)
    assert back["points"] == Decimal("12.35") and back["pi"] == 0.1 + 0.2
    assert back["ratings"].tolist() == [1.5, -2.25] and back["slots"].dtype == np.int32
    assert back["slots"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert back["ids"].equals(ids) and back["sliced"].equals(ids.slice(1))
    assert back["table"].equals(pa.table({"a": [1, 2]})) and back[3] == "non-text key"
    assert state_codec.dumps(back) == state_codec.dumps(state)


def test_a_string_array_is_stored_by_its_values_not_its_memory():
    # The same ids in a larger buffer (room for more) give the same bytes.
    roomy = pa.StringArray.from_buffers(
        2, pa.py_buffer(np.array([0, 2, 4], np.int32)), pa.py_buffer(np.frombuffer(b"p1p2" + b"\0" * 60, np.uint8))
    )
    assert state_codec.dumps({"ids": roomy}) == state_codec.dumps({"ids": pa.array(["p1", "p2"])})


def test_object_arrays_are_refused():
    with pytest.raises(TypeError):
        state_codec.dumps({"bad": np.array(["x"], dtype=object)})
