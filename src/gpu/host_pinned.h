/* Page-locked host memory (hbs_gpu_host_alloc, cudaHostRegister), which the GPU copies to
 * and from directly: the batch paths skip their staging copy for a caller's buffer in it. */
#ifndef HBS_GPU_HOST_PINNED_H
#define HBS_GPU_HOST_PINNED_H

#include <stddef.h>
#include <stdint.h>

namespace hbs_gpu {

/* Whether [p, p + bytes) is page-locked; both ends are asked, so a range that runs off a
 * pinned allocation counts as pageable. (runtime.cu; the GPU emulator has its own.) */
bool host_pinned(const void *p, size_t bytes);

/* items[0 .. count), each lens[i] == size bytes, as one run of page-locked memory (each
 * right after the one before): its start, from which the GPU copies them all at once; null
 * otherwise. */
inline const uint8_t *pinned_run(const uint8_t *const *items, const size_t *lens,
                                 size_t count, size_t size)
{
    if (count == 0 || size == 0 || count > SIZE_MAX / size || !items[0])
        return nullptr;
    const uintptr_t base = (uintptr_t)items[0];
    for (size_t i = 0; i < count; i++)
        if (lens[i] != size || (uintptr_t)items[i] != base + i * size)
            return nullptr;
    return host_pinned(items[0], count * size) ? items[0] : nullptr;
}

} // namespace hbs_gpu

#endif
