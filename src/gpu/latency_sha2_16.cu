/* The one-signature kernel for the SHA2 sets with n = 16. */
#include "gpu/latency.cuh"

namespace hbs_gpu {
lat_kernel latency_sha2_16() { return lat_make<FAM_SHA2, 16>(); }
} // namespace hbs_gpu
