"""A test-only stand-in for cudf (never shipped), over the pylibcudf
stand-in: what godevarrow.cudf uses of cudf 25.08.

- ``DataFrame.to_pylibcudf()`` returns ``(Table, {"columns": names})`` and
  ``Series.to_pylibcudf()`` ``(Column, metadata)`` (cudf/core/dataframe.py,
  cudf/core/series.py, ``to_pylibcudf``).
- ``DataFrame.from_pylibcudf(table, metadata)`` names the columns from
  ``metadata["columns"]`` (cudf/core/dataframe.py, ``from_pylibcudf``).
- ``DataFrame.to_arrow()`` is a host ``pyarrow.Table`` with the column
  names (cudf/core/dataframe.py, ``to_arrow``).
"""

from __future__ import annotations

from typing import Any

import godevarrow as gda
import pyarrow as pa
import pylibcudf

__version__ = "25.08.00"


class Series:
    def __init__(self, column: pylibcudf.Column, name: Any = None) -> None:
        self._column = column
        self.name = name

    def to_pylibcudf(self) -> tuple[pylibcudf.Column, dict[str, Any]]:
        return self._column, {"name": self.name}

    @property
    def null_count(self) -> int:
        return self._column.null_count()


class DataFrame:
    def __init__(self, data: Any = None) -> None:
        self._names: list[Any] = []
        self._table = pylibcudf.Table([])
        if data is not None:
            host = pa.record_batch(data) if isinstance(data, dict) else data
            self._table = pylibcudf.Table.from_arrow(gda.record_batch(host).to_device("cuda:0"))
            self._names = list(pa.record_batch(host).schema.names)

    @property
    def columns(self) -> list[Any]:
        return list(self._names)

    @columns.setter
    def columns(self, names: list[Any]) -> None:
        self._names = list(names)

    def __getitem__(self, name: Any) -> Series:
        return Series(self._table.columns()[self._names.index(name)], name)

    def to_pylibcudf(self) -> tuple[pylibcudf.Table, dict[str, Any]]:
        return self._table, {"columns": list(self._names)}

    @classmethod
    def from_pylibcudf(cls, table: pylibcudf.Table, metadata: dict[str, Any]) -> DataFrame:
        df = cls()
        df._table = table
        df._names = list(metadata["columns"])
        return df

    def to_arrow(self) -> pa.Table:
        host = gda.record_batch(self._table).to_device("cpu").to_pyarrow()
        return pa.Table.from_batches([host]).rename_columns([str(n) for n in self._names])
