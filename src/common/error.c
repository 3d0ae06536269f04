#include "hbs/hbs.h"

const char *hbs_strerror(int err)
{
    switch (err) {
    case HBS_OK: return "success";
    case HBS_ERR_INVALID_ARGUMENT: return "invalid argument";
    case HBS_ERR_UNKNOWN_ALGORITHM: return "unknown algorithm";
    case HBS_ERR_VERIFY_FAILED: return "signature verification failed";
    case HBS_ERR_MALFORMED_KEY: return "malformed key";
    case HBS_ERR_CONTEXT_TOO_LONG: return "context string longer than 255 bytes";
    case HBS_ERR_UNKNOWN_PREHASH: return "unknown or disallowed pre-hash function";
    case HBS_ERR_RANDOMNESS: return "the system random number generator failed";
    case HBS_ERR_NO_MEMORY: return "out of memory";
    case HBS_ERR_IO: return "input/output error";
    case HBS_ERR_MALFORMED_INPUT: return "malformed input";
    case HBS_ERR_BUFFER_TOO_SMALL: return "output buffer too small";
    case HBS_ERR_UNSUPPORTED: return "not supported";
    case HBS_ERR_KEY_EXHAUSTED: return "the stateful key is exhausted: no signatures left";
    case HBS_ERR_STATE: return "the key state is corrupt or inconsistent";
    case HBS_ERR_BUSY: return "the key file is in use by another signer";
    case HBS_ERR_GPU: return "GPU error";
    case HBS_ERR_NO_GPU: return "no usable GPU";
    case HBS_ERR_CANCELLED: return "cancelled";
    default: return "unknown error";
    }
}

const char *hbs_version(void) { return HBS_VERSION_STRING; }
