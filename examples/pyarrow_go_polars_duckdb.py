"""A pyarrow table handed to Go (zero-copy), validated there, then read by
polars and duckdb straight from godevarrow."""

import godevarrow as gda
import pyarrow as pa

table = pa.table({"city": ["Oslo", "Lima", "Pune", "Oslo"], "temp": [3.5, 19.0, 31.2, 4.1]})
batch = gda.record_batch(table.to_batches()[0])  # Go now sees the same buffers
batch.validate(full=True)  # Go checks every offset and UTF-8 string
print("in Go:", batch)

try:
    import polars as pl

    df = pl.DataFrame(gda.stream(batch))
    print("polars mean temp:", df["temp"].mean())
except ImportError:
    print("polars not installed")

try:
    import duckdb

    con = duckdb.connect()
    con.register("weather", gda.stream(batch))
    print("duckdb:", con.execute("select city, max(temp) from weather group by city order by city").fetchall())
except ImportError:
    print("duckdb not installed")

back = pa.record_batch(batch)  # and back to pyarrow, zero-copy
assert back.equals(table.to_batches()[0])
print("round trip OK")
