/* The SLH-DSA kernels and drivers for the SHAKE sets with n = 16. */
#include "gpu/slhdsa_ops.cuh"

namespace hbs_gpu {
ops ops_shake_16() { return make_ops<FAM_SHAKE, 16>(); }
} // namespace hbs_gpu
