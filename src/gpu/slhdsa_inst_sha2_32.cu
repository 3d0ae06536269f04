/* The SLH-DSA kernels and drivers for the SHA2 sets with n = 32. */
#include "gpu/slhdsa_ops.cuh"

namespace hbs_gpu {
ops ops_sha2_32() { return make_ops<FAM_SHA2, 32>(); }
} // namespace hbs_gpu
