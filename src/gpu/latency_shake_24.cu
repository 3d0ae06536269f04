/* The one-signature kernel for the SHAKE sets with n = 24. */
#include "gpu/latency.cuh"

namespace hbs_gpu {
lat_kernel latency_shake_24() { return lat_make<FAM_SHAKE, 24>(); }
} // namespace hbs_gpu
