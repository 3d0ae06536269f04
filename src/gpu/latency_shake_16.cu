/* The one-signature kernel for the SHAKE sets with n = 16. */
#include "gpu/latency.cuh"

namespace hbs_gpu {
lat_kernel latency_shake_16() { return lat_make<FAM_SHAKE, 16>(); }
} // namespace hbs_gpu
