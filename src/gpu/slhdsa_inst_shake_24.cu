/* The SLH-DSA kernels and drivers for the SHAKE sets with n = 24. */
#include "gpu/slhdsa_ops.cuh"

namespace hbs_gpu {
ops ops_shake_24() { return make_ops<FAM_SHAKE, 24>(); }
} // namespace hbs_gpu
