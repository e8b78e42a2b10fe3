"""numpy <-> godevarrow through DLPack, zero-copy."""

import godevarrow as gda
import numpy as np

x = np.arange(10, dtype=np.float64)
g = gda.array(x)  # numpy -> Arrow (DLPack)
print("Arrow array from numpy:", g)
y = np.from_dlpack(g)  # Arrow -> numpy, the same memory
assert np.shares_memory(x, y)
print("numpy view:", y[:5], "... zero-copy:", np.shares_memory(x, y))
