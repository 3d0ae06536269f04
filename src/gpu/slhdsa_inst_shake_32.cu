/* The SLH-DSA kernels and drivers for the SHAKE sets with n = 32. */
#include "gpu/slhdsa_ops.cuh"

namespace hbs_gpu {
ops ops_shake_32() { return make_ops<FAM_SHAKE, 32>(); }
} // namespace hbs_gpu
