/* Every test group, in the order the runner runs them. Add a group here and in groups.c. */
#ifndef HBS_TEST_GROUPS_H
#define HBS_TEST_GROUPS_H
#include "test.h"

typedef struct {
    const char *name;
    const hbs_test *tests;
} hbs_test_group;

extern const hbs_test_group hbs_test_groups[];

extern const hbs_test hbs_tests_hash[];     /* tests/unit/test_hash.c */
extern const hbs_test hbs_tests_encoding[]; /* tests/unit/test_encoding.c */
extern const hbs_test hbs_tests_simd_sha256[]; /* tests/unit/test_simd_sha256.c */
extern const hbs_test hbs_tests_simd_sha512[]; /* tests/unit/test_simd_sha512.c */
extern const hbs_test hbs_tests_simd_keccak[]; /* tests/unit/test_simd_keccak.c */
extern const hbs_test hbs_tests_chains[];   /* tests/unit/test_chains.c */
extern const hbs_test hbs_tests_slhdsa[];   /* tests/unit/test_slhdsa.c */
extern const hbs_test hbs_tests_lms[];      /* tests/unit/test_lms.c */
extern const hbs_test hbs_tests_xmss[];     /* tests/unit/test_xmss.c */
extern const hbs_test hbs_tests_state[];    /* tests/state/test_state.c */
extern const hbs_test hbs_tests_lms_vectors[];  /* tests/vectors/test_lms_vectors.c */
extern const hbs_test hbs_tests_xmss_vectors[]; /* tests/vectors/test_xmss_vectors.c */
extern const hbs_test hbs_tests_stateful[]; /* tests/stateful/test_stateful.c */
extern const hbs_test hbs_tests_vectors[];  /* tests/vectors/test_acvp.c */
extern const hbs_test hbs_tests_interop[];  /* tests/interop/test_noble.c */
extern const hbs_test hbs_tests_misuse[];   /* tests/misuse/test_misuse.c */
extern const hbs_test hbs_tests_gpu[];      /* tests/gpu/test_gpu.c */
extern const hbs_test hbs_tests_gpu_cli[];  /* tests/gpu/test_gpu_cli.c */
extern const hbs_test hbs_tests_gpu_stateful[]; /* tests/gpu/test_gpu_stateful.c */
extern const hbs_test hbs_tests_gpu_stateful_device[]; /* tests/gpu/test_gpu_stateful_device.c */
extern const hbs_test hbs_tests_cli[];      /* tests/cli/test_cli.c */
#endif
