#include "backend.h"

_Atomic(const struct gda_device_backend*) gda_backend_vtables[GDA_BACKEND_TYPES];

void gda_backend_register(int32_t t, const struct gda_device_backend* b) {
  if (t >= 0 && t < GDA_BACKEND_TYPES) atomic_store(&gda_backend_vtables[t], b);
}
