"""Facts about the process: the CUDA backend, and the Go core's live objects."""

from __future__ import annotations

from . import _godevarrow as _lib


def cuda_status() -> tuple[bool, int, str, str]:
    """(available, device count, driver library, message) of the CUDA backend.

    The driver is ``libcuda.so.1``, or the library named by the environment
    variable ``GODEVARROW_LIBCUDA``; it is opened on first use."""
    try:
        st = _lib.cuda_status()
    except Exception as exc:  # never raise from a status query
        return False, 0, "", f"CUDA status unavailable: {exc}"
    return bool(st.available), st.device_count, st.library, st.message


def cuda_available() -> bool:
    """Whether a CUDA driver with at least one device can be used. Never raises."""
    ok, count, _, _ = cuda_status()
    return ok and count > 0


def cuda_device_count() -> int:
    """The number of CUDA devices (0 without a driver). Never raises."""
    return cuda_status()[1]


def build_facts() -> dict[str, str]:
    """The extension's build, from build_info(): go (the toolchain, with
    "-X:..." after it for a build with Go experiments), goarch, arrow_go,
    and modules (every linked Go module, path@version, comma-separated)."""
    return dict(line.split("=", 1) for line in _lib.build_info().splitlines())


def debug_live_objects() -> dict[str, int]:
    """Live objects of the Go core, for leak checks: every counter returns to
    its baseline once Python dropped its objects and every consumer released
    what it was given."""
    counters = _lib.debug_counters()
    return {name: getattr(counters, name) for name in type(counters).__match_args__ if name not in _CACHE_COUNTERS}


# debug_counters() also gives the size of the schema import cache and what
# the device pools keep for reuse: what they hold is bounded (SECURITY.md),
# not owed to anyone, so no leak; and a running count of DLPack tensors made
# in C from an array's template.
_CACHE_COUNTERS = frozenset(
    {
        "dlpack_template_exports",
        "schema_cache_entries",
        "schema_cache_bytes",
        "pooled_streams",
        "pooled_events",
        "pooled_host_buffers",
        "pooled_device_blocks",
        "pooled_device_bytes",
    }
)
