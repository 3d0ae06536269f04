/* hbs: hash-based signatures. Common definitions: version, error codes, backends.
 *
 * Conventions for every public function:
 *  - argument order is: context/parameters, outputs, inputs; a length follows its buffer;
 *  - the return value is 0 (HBS_OK) or a negative HBS_ERR_* code;
 *  - on failure every output buffer is zeroed, so a half-written secret never escapes;
 *  - results that must be checked are marked HBS_WARN_UNUSED_RESULT.
 */
#ifndef HBS_HBS_H
#define HBS_HBS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HBS_VERSION_MAJOR 0
#define HBS_VERSION_MINOR 1
#define HBS_VERSION_PATCH 0
#define HBS_VERSION_STRING "0.1.0"

#if defined(__GNUC__) || defined(__clang__)
#define HBS_WARN_UNUSED_RESULT __attribute__((warn_unused_result))
#else
#define HBS_WARN_UNUSED_RESULT
#endif

#if defined(_WIN32)
#define HBS_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define HBS_API __attribute__((visibility("default")))
#else
#define HBS_API
#endif

enum {
    HBS_OK = 0,
    HBS_ERR_INVALID_ARGUMENT = -1,  /* NULL pointer, bad length, value out of range */
    HBS_ERR_UNKNOWN_ALGORITHM = -2, /* parameter set name or id not known */
    HBS_ERR_VERIFY_FAILED = -3,     /* signature does not verify (including wrong length) */
    HBS_ERR_MALFORMED_KEY = -4,     /* key bytes or key file cannot be parsed */
    HBS_ERR_CONTEXT_TOO_LONG = -5,  /* context string over 255 bytes */
    HBS_ERR_UNKNOWN_PREHASH = -6,   /* pre-hash function name not allowed */
    HBS_ERR_RANDOMNESS = -7,        /* the operating system's random source failed */
    HBS_ERR_NO_MEMORY = -8,
    HBS_ERR_IO = -9,                /* reading or writing a file failed */
    HBS_ERR_MALFORMED_INPUT = -10,  /* an encoded input (PEM, DER, hex) is malformed */
    HBS_ERR_BUFFER_TOO_SMALL = -11,
    HBS_ERR_UNSUPPORTED = -12,      /* feature not available in this build or on this CPU */
    HBS_ERR_KEY_EXHAUSTED = -13,    /* a stateful key has no one-time keys (indices) left */
    HBS_ERR_STATE = -14,            /* a stateful key's state file is corrupt or inconsistent */
    HBS_ERR_BUSY = -15,             /* the key file is locked by another signer */
    HBS_ERR_GPU = -16,              /* a CUDA call failed (hbs_gpu_last_error() says which) */
    HBS_ERR_NO_GPU = -17,           /* no usable GPU in this build or on this machine */
    HBS_ERR_CANCELLED = -18,        /* a progress callback asked to stop */
};

/* Progress of long work (key generation of tall trees): called now and then with the units
 * done so far and the total; returning nonzero cancels the work (HBS_ERR_CANCELLED). It may
 * be called from any of the library's threads, never from two at once. */
typedef int (*hbs_progress_fn)(void *user, uint64_t done, uint64_t total);

/* A one-line English description of an HBS_ERR_* code (never NULL). */
HBS_API const char *hbs_strerror(int err);

/* Version string of the library that is linked, e.g. "0.1.0". */
HBS_API const char *hbs_version(void);

/* Name of the hash backend in use, e.g. "avx512" or "portable". */
HBS_API const char *hbs_backend_name(void);

/* The hash backends compiled into this build, best first ("avx512", "shani", "avx2",
 * "portable"); NULL past the end. hbs_backend_supported says whether this CPU runs one. */
HBS_API const char *hbs_backend_at(size_t i);
HBS_API int hbs_backend_supported(const char *name);

/* Forces a backend by name, process-wide: for tests, benchmarks, or a CPU the detection
 * misjudges. The HBS_BACKEND environment variable does the same at start-up. Returns
 * HBS_ERR_UNSUPPORTED for a name not compiled in or not supported by this CPU. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_set_backend(const char *name);

/* Threads used by signing and key generation: 0 means all online cores (the default, or
 * the HBS_THREADS environment variable), 1 means no threads. Process-wide. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_set_threads(unsigned n);
HBS_API unsigned hbs_get_threads(void);

/* Overwrite a buffer with zeros in a way the compiler cannot remove. */
HBS_API void hbs_memzero(void *p, size_t len);

/* Fill with bytes from the operating system's random source. */
HBS_API HBS_WARN_UNUSED_RESULT int hbs_randombytes(uint8_t *out, size_t len);

#ifdef __cplusplus
}
#endif
#endif
