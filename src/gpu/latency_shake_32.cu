/* The one-signature kernel for the SHAKE sets with n = 32. */
#include "gpu/latency.cuh"

namespace hbs_gpu {
lat_kernel latency_shake_32() { return lat_make<FAM_SHAKE, 32>(); }
} // namespace hbs_gpu
