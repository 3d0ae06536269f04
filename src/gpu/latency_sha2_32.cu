/* The one-signature kernel for the SHA2 sets with n = 32. */
#include "gpu/latency.cuh"

namespace hbs_gpu {
lat_kernel latency_sha2_32() { return lat_make<FAM_SHA2, 32>(); }
} // namespace hbs_gpu
