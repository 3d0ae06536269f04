/* The one-signature kernel for the SHA2 sets with n = 24. */
#include "gpu/latency.cuh"

namespace hbs_gpu {
lat_kernel latency_sha2_24() { return lat_make<FAM_SHA2, 24>(); }
} // namespace hbs_gpu
