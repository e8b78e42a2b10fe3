"""CuPy and cuDF on a GPU; prints why it skipped elsewhere."""

import godevarrow as gda

ok, count, library, message = gda.cuda_status()
try:
    import cupy as cp
except ImportError:
    cp = None
if cp is None or not ok or "fakecuda" in library:
    print("skipped: needs a real CUDA GPU with CuPy" + ("" if cp else " (CuPy is not installed)"))
    raise SystemExit(0)

import godevarrow.cupy as gcp  # noqa: E402

x = cp.arange(1_000_000, dtype=cp.float32)
g = gcp.from_cupy(x, mask=x % 7 != 0)  # values and validity stay on the GPU
print("on", g.device, "nulls:", g.null_count)
print("sum on the GPU via CuPy:", float(gcp.to_cupy(gcp.from_cupy(x)).sum()))
try:
    import cudf
    import godevarrow.cudf as gcudf

    df = cudf.DataFrame({"a": [1, 2, 3], "b": ["x", "y", None]})
    batch = gcudf.from_cudf(df)
    print("cuDF -> godevarrow:", batch.column_names, batch.device)
    print(gcudf.to_cudf(batch))
except ImportError:
    print("cuDF not installed")
