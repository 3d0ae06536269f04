#include "groups.h"

const hbs_test_group hbs_test_groups[] = {
    {"unit", hbs_tests_hash},
    {"unit", hbs_tests_encoding},
    {"unit", hbs_tests_simd_sha256},
    {"unit", hbs_tests_simd_sha512},
    {"unit", hbs_tests_simd_keccak},
    {"unit", hbs_tests_chains},
    {"unit", hbs_tests_slhdsa},
    {"unit", hbs_tests_lms},
    {"unit", hbs_tests_xmss},
    {"unit", hbs_tests_state},
    {"vectors", hbs_tests_vectors},
    {"vectors", hbs_tests_lms_vectors},
    {"vectors", hbs_tests_xmss_vectors},
    {"stateful", hbs_tests_stateful},
    {"misuse", hbs_tests_misuse},
    {"cli", hbs_tests_cli},
    {"interop", hbs_tests_interop},
    {"gpu", hbs_tests_gpu},
    {NULL, NULL},
};
