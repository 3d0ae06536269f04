/* The durable state store: one file per stateful private key (LMS/HSS, XMSS/XMSS^MT).
 *
 * A store file holds a small header and an opaque payload, the scheme's exported private
 * state (secret). All integers are big-endian:
 *
 *   offset  size  field
 *        0     8  magic "HBSSTATE"
 *        8     4  format version (1)
 *       12     4  scheme tag (HBS_STORE_SCHEME_*, or any number the caller chooses)
 *       16     8  next: the first index not yet handed out
 *       24     8  payload length L (at most HBS_STORE_MAX_PAYLOAD)
 *       32     L  payload
 *     32+L    32  SHA-256 of bytes 0 .. 32+L
 *
 * Beside the key file "K" live "K.lock" (the lock, never renamed, deleted only by a create
 * that failed) and, only while a commit runs or after a crash in one, "K.tmp", which the
 * store removes when it finds it. So a key's name may not end in ".tmp" or ".lock".
 *
 * WHY A CRASH CAN BURN INDICES BUT NEVER REUSE ONE
 *
 * The invariant: every index the caller has ever used (released a signature for) is below
 * the `next` of the key file on disk, whatever moment the machine stops.
 *
 *  1. The file only changes by replacement: the new contents go to K.tmp, which is fsynced
 *     and then renamed over K, after which the directory is fsynced. rename() is atomic, so
 *     K is at every moment either the whole old file or the whole new one, never a mixture;
 *     the checksum catches anything else (a torn sector, a bad disk) as HBS_ERR_STATE rather
 *     than a silently wrong `next`. Because K.tmp was fsynced before the rename, the name can
 *     never point at a file whose data is not on disk.
 *  2. hbs_store_commit returns HBS_OK only after both fsyncs succeeded, so the new `next` is
 *     durable before the caller may use any index below it. The caller must use an index i
 *     only after a commit of some next > i returned HBS_OK. A crash before that point loses
 *     at most the commit itself: the file still has the old `next`, and no index at or above
 *     it was used.
 *  3. `next` never goes down: commit refuses a value below the one in the file, and the value
 *     it compares with was read from the file after the lock was taken, so it is the latest.
 *  4. A failed commit returns HBS_ERR_IO and leaves the store object unchanged; the caller
 *     releases nothing. If the failure came after the rename, the old contents are written
 *     back (best effort); either way the file on disk has a `next` at least the old one.
 *  5. Two signers cannot interleave: the lock (flock on K.lock, one open file description per
 *     hbs_store_open, so two threads serialise as well as two processes) is taken before the
 *     file is read and held until hbs_store_close. It is on a file that is never renamed, so
 *     the rename of K does not let a second signer in (a lock on K itself would be lost with
 *     K's old inode). The lock is released by the kernel when its holder dies.
 *
 * Reservations: to sign N messages with one sync, commit next+N first, then sign indices
 * next .. next+N-1 from memory. The file already excludes them all, so a crash in between
 * burns the unused ones (at most N) and reuses none. After an open, the caller moves its key
 * to hbs_store_next() (skip forward) before signing, since the payload may have been saved
 * with a lower internal index than the reservation reached.
 *
 * Limits: the lock is an advisory flock(), reliable on local filesystems; over NFS, Linux
 * maps flock to POSIX record locks, which do not separate two threads of one process. One
 * thread must not open the same key twice with HBS_STORE_WAIT (it would wait for itself).
 * A store object is used by one thread at a time. A child made by fork() shares the open
 * store's lock (an exec does not: the descriptors are close-on-exec).
 */
#ifndef HBS_STATE_STORE_H
#define HBS_STATE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "hbs/hbs.h"

/* Scheme tags the library uses (the store itself accepts any value). */
#define HBS_STORE_SCHEME_HSS 1u
#define HBS_STORE_SCHEME_XMSS 2u

#define HBS_STORE_MAX_PAYLOAD ((size_t)1 << 28)
#define HBS_STORE_HEADER_BYTES 32u
#define HBS_STORE_CHECKSUM_BYTES 32u
#define HBS_STORE_FORMAT_VERSION 1u

/* Flags of hbs_store_open. */
#define HBS_STORE_WAIT 1    /* wait for the lock; without it a held lock gives HBS_ERR_BUSY */
#define HBS_STORE_NO_SYNC 2 /* benchmarks only: commits skip fsync, so a power failure may
                               roll the file back and indices be reused. Never for real keys */

typedef struct hbs_store hbs_store;

/* Creates a new key file at path (fails if one exists: HBS_ERR_IO with errno EEXIST), mode
 * 0600, and its lock file. The file appears complete or not at all, and is durable when this
 * returns HBS_OK. A path whose last part is empty, ".", "..", or ends in ".tmp" or ".lock"
 * gives HBS_ERR_INVALID_ARGUMENT (also in hbs_store_open). */
HBS_WARN_UNUSED_RESULT int hbs_store_create(const char *path, uint32_t scheme, uint64_t next,
                                            const uint8_t *payload, size_t len);

/* Locks the key file at path (flags: HBS_STORE_WAIT, HBS_STORE_NO_SYNC), reads it and checks
 * it. Errors: HBS_ERR_BUSY (locked, no WAIT), HBS_ERR_STATE (corrupt or not a store file; the
 * file is not changed), HBS_ERR_IO (cannot be opened or read; errno says why),
 * HBS_ERR_NO_MEMORY, HBS_ERR_INVALID_ARGUMENT. *s is NULL on failure. */
HBS_WARN_UNUSED_RESULT int hbs_store_open(hbs_store **s, const char *path, int flags);

uint32_t hbs_store_scheme(const hbs_store *s);
uint64_t hbs_store_next(const hbs_store *s);
/* The payload as last read or committed; valid until the next commit or close. */
const uint8_t *hbs_store_payload(const hbs_store *s, size_t *len);

/* Durably replaces the file with (next, payload). next below hbs_store_next(s) gives
 * HBS_ERR_STATE. Any write, fsync or rename failure gives HBS_ERR_IO (errno says why), with
 * no temp file left, the old file in place and s unchanged. */
HBS_WARN_UNUSED_RESULT int hbs_store_commit(hbs_store *s, uint64_t next, const uint8_t *payload,
                                            size_t len);

/* Unlocks and wipes; NULL is fine. */
void hbs_store_close(hbs_store *s);

/* ---- internals, for the fuzzer and the tests ---- */

/* Size of the file encoding of a payload of len bytes. */
size_t hbs_store_encoded_bytes(size_t len);
/* Writes the file encoding into out (hbs_store_encoded_bytes(len) bytes). */
void hbs_store_encode(uint8_t *out, uint32_t scheme, uint64_t next, const uint8_t *payload,
                      size_t len);
/* Parses and checks a whole file image: HBS_OK with the fields (the payload points into in),
 * or HBS_ERR_STATE for anything else. Never reads outside in[0..inlen). */
HBS_WARN_UNUSED_RESULT int hbs_store_parse(const uint8_t *in, size_t inlen, uint32_t *scheme,
                                           uint64_t *next, const uint8_t **payload,
                                           size_t *len);

/* Test-only fault injection: step k > 0 makes the k-th fallible file operation (open, write,
 * fsync, close, rename, link) of create/commit from now on fail once with EIO; 0 disarms.
 * Process-wide; returns the number of such operations run since the previous call. */
unsigned hbs_store_test_fail_at(unsigned step);
/* Test-only slow disk: every create/commit from now on waits ms milliseconds after writing
 * its temporary file, before the rename that puts the new state in place; 0 disarms.
 * Process-wide; returns the previous value. */
unsigned hbs_store_test_hold(unsigned ms);

#endif
