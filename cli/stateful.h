/* The CLI's side of the stateful schemes (LMS/HSS, XMSS/XMSS^MT): what keygen, sign, verify,
 * list and key call when the algorithm or key is a stateful one. */
#ifndef HBS_CLI_STATEFUL_H
#define HBS_CLI_STATEFUL_H

#include "cli.h"
#include "hbs/stateful.h"

/* Whether an algorithm name is a stateful one (LMS/HSS or XMSS/XMSS^MT). */
int hbs_cli_is_stateful_alg(const char *name);
/* Whether the file starts like a stateful key (state) file; 0 for "-" or unreadable. */
int hbs_cli_is_state_file(const char *path);

/* keygen -a ALG -s STATE -p PUBLIC [--seed HEX] [--raw] */
int hbs_cli_stateful_keygen(const char *alg, const char *sk_path, const char *pk_path,
                            const char *seed_hex, int raw, unsigned long traversal);
/* The same with the leaves computed on the GPU when gpu is set (an error without one). */
int hbs_cli_stateful_keygen_on(const char *alg, const char *sk_path, const char *pk_path,
                               const char *seed_hex, int raw, unsigned long traversal, int gpu);
/* sign -s STATE -m MESSAGE -x SIGNATURE [--reserve N]; the signature is verified before it
 * is written. */
int hbs_cli_stateful_sign(const char *sk_path, const char *msg_path, const char *sig_path,
                          unsigned long reserve);
/* verify, once the public key file is loaded (scheme HSS, XMSS or XMSSMT). */
int hbs_cli_stateful_verify(const hbs_key *pk, const char *msg_path, const char *sig_path,
                            int quiet);
/* Writes a stateful public key: PEM SubjectPublicKeyInfo (RFC 9802), or the bare bytes. */
int hbs_cli_stateful_write_public(hbs_stateful_family f, const uint8_t *pk, size_t pklen,
                                  const char *path, int raw);
/* Builds a stateful public key structure from raw bytes named by -a ALG (--raw). */
int hbs_cli_stateful_raw_pk(hbs_key *k, const char *path, const uint8_t *buf, size_t len,
                            const char *alg);
/* The names `hbs list` prints. */
void hbs_cli_stateful_list(FILE *f);

extern const hbs_cli_command hbs_cli_cmd_key;

#endif
