/* CPU feature detection, once per process. Beside CPUID's feature bits, the OS must have
 * enabled saving of the wide registers (XGETBV), or using them faults. */
#include <pthread.h>

#include "hash/x86/x86.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static int has_avx2, has_avx512, has_shani;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static unsigned long long xgetbv0(void)
{
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (unsigned long long)hi << 32 | lo;
}

static void cpu_detect(void)
{
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return;
    const int osxsave = (c >> 27) & 1, sse41 = (c >> 19) & 1;
    unsigned long long xcr0 = osxsave ? xgetbv0() : 0;
    const int ymm_ok = (xcr0 & 0x6) == 0x6;       /* XMM and YMM state */
    const int zmm_ok = (xcr0 & 0xe6) == 0xe6;     /* plus opmask and ZMM state */
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return;
    const int avx2 = (b >> 5) & 1, bmi2 = (b >> 8) & 1;
    const int avx512f = (b >> 16) & 1, avx512bw = (b >> 30) & 1, avx512vl = (b >> 31) & 1;
    const int sha = (b >> 29) & 1;
    has_avx2 = avx2 && bmi2 && ymm_ok;
    has_avx512 = has_avx2 && avx512f && avx512bw && avx512vl && zmm_ok;
    has_shani = sha && sse41;
}

int hbs_cpu_has_avx2(void)
{
    pthread_once(&cpu_once, cpu_detect);
    return has_avx2;
}

int hbs_cpu_has_avx512(void)
{
    pthread_once(&cpu_once, cpu_detect);
    return has_avx512;
}

int hbs_cpu_has_shani(void)
{
    pthread_once(&cpu_once, cpu_detect);
    return has_shani;
}
#else
int hbs_cpu_has_avx2(void) { return 0; }
int hbs_cpu_has_avx512(void) { return 0; }
int hbs_cpu_has_shani(void) { return 0; }
#endif
