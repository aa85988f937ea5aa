/* serpeval's compiled kernels: plain C, no Python headers, loaded with ctypes by
 * serpeval/core/native.py. Built at install time by hatch_build.py with the machine's C
 * compiler; when it is absent or fails, serpeval runs the NumPy implementations in
 * serpeval/core/arrays.py, which these kernels must match bit for bit (tests/test_native.py).
 *
 * Strings are Arrow string arrays: int32 offsets (already moved by the array's offset) and
 * the data buffer. Every function works on caller-owned memory and allocates nothing.
 */
#include <stdint.h>
#include <string.h>

#define SV_ABI 1
#define MIX 0x9E3779B97F4A7C15ULL
#define MIX2 0xC2B2AE3D27D4EB4FULL
#define PREFETCH_AHEAD 16

int64_t sv_abi(void) { return SV_ABI; }

/* The fingerprint of one string (serpeval.core.arrays.fingerprint): h = len * M, then for
 * each 8-byte little-endian word w (the last one zero-padded) h = mix((h ^ w) * M) with
 * mix(x) = x ^ (x >> 31). */
static inline uint64_t fingerprint_one(const uint8_t *s, int64_t len) {
    uint64_t h = (uint64_t)len * MIX;
    int64_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h ^= w;
        h *= MIX;
        h ^= h >> 31;
    }
    if (i < len) {
        uint64_t w = 0;
        memcpy(&w, s + i, (size_t)(len - i));
        h ^= w;
        h *= MIX;
        h ^= h >> 31;
    }
    return h;
}

/* out[i] = fingerprint of string i; with codes, the (query code, doc) pair key
 * serpeval.core.arrays.pair_key: fingerprint ^ (uint64)code * MIX2. */
void sv_fingerprint(int64_t n, const int32_t *offsets, const uint8_t *data,
                    const int32_t *codes, uint64_t *out) {
    for (int64_t i = 0; i < n; i++) {
        uint64_t h = fingerprint_one(data + offsets[i], (int64_t)offsets[i + 1] - offsets[i]);
        if (codes) h ^= (uint64_t)(int64_t)codes[i] * MIX2;
        out[i] = h;
    }
}

/* Probe serpeval.core.arrays.KeyTable (linear probing; slot_rows[slot] is a row or `empty`,
 * table_keys[empty] == 0; keys are stored with their lowest bit set) with keys[i] | 1, and
 * confirm every match: string a[i] must equal string b[row], and where given, a_codes[i]
 * must equal b_codes[row]. The first stored row with an equal key decides, as in
 * KeyTable.lookup. out[i]: the row (confirmed), -1 (no such key), -2 (the key's row is
 * another string: a fingerprint collision). keys are set to keys | 1 in place. */
void sv_probe(int64_t n, uint64_t *keys, const int32_t *a_offsets, const uint8_t *a_data,
              const int32_t *a_codes, const int32_t *slot_rows, const uint64_t *table_keys,
              int64_t shift, const int32_t *b_offsets, const uint8_t *b_data,
              const int32_t *b_codes, int32_t *out) {
    for (int64_t i = 0; i < n; i++) keys[i] |= 1;
    for (int64_t i = 0; i < n; i++) {
        if (i + PREFETCH_AHEAD < n) __builtin_prefetch(slot_rows + (keys[i + PREFETCH_AHEAD] >> shift));
        uint64_t key = keys[i];
        uint64_t slot = key >> shift;
        int32_t row;
        uint64_t stored;
        for (;;) {
            row = slot_rows[slot];
            stored = table_keys[row];
            if (stored == key || stored == 0) break;
            slot++; /* never past the end: the table's last slot is always empty */
        }
        if (stored == 0) {
            out[i] = -1;
            continue;
        }
        int ok = 1;
        if (a_codes && b_codes && a_codes[i] != b_codes[row]) ok = 0;
        if (ok) {
            int64_t len = (int64_t)a_offsets[i + 1] - a_offsets[i];
            if (len != (int64_t)b_offsets[row + 1] - b_offsets[row]) ok = 0;
            else if (len && memcmp(a_data + a_offsets[i], b_data + b_offsets[row], (size_t)len) != 0) ok = 0;
        }
        out[i] = ok ? row : -2;
    }
}

/* The first position p (in the order of `keys`) whose key occurs earlier in its segment
 * offsets[s]..offsets[s + 1], or -1. Keys must be nonzero (lowest bit set). `scratch` holds
 * at least the smallest power of two >= 2 * the longest segment (and >= 16) entries. */
int64_t sv_first_repeat(const uint64_t *keys, const int64_t *offsets, int64_t n_segments,
                        uint64_t *scratch) {
    for (int64_t s = 0; s < n_segments; s++) {
        int64_t start = offsets[s], stop = offsets[s + 1], len = stop - start;
        if (len < 2) continue;
        if (len <= 8) { /* short rankings: compare pairwise */
            for (int64_t i = start + 1; i < stop; i++)
                for (int64_t j = start; j < i; j++)
                    if (keys[i] == keys[j]) return i;
            continue;
        }
        int bits = 4;
        while (((int64_t)1 << bits) < 2 * len) bits++;
        uint64_t size = (uint64_t)1 << bits, mask = size - 1;
        memset(scratch, 0, size * sizeof(uint64_t));
        for (int64_t i = start; i < stop; i++) {
            uint64_t key = keys[i];
            uint64_t slot = key >> (64 - bits);
            while (scratch[slot]) {
                if (scratch[slot] == key) return i;
                slot = (slot + 1) & mask;
            }
            scratch[slot] = key;
        }
    }
    return -1;
}

/* serpeval.io.trec's single-space test on one slice of a file: 0 when the slice has a tab,
 * vertical tab or form feed, two neighbouring bytes <= 0x20 one of which is a space, or a
 * UTF-8 byte order mark right after a line feed or carriage return; else 1. */
int64_t sv_single_spaced(const uint8_t *p, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        if (c > 0x20) {
            if (c == 0xEF && i > 0 && (p[i - 1] == 0x0A || p[i - 1] == 0x0D) && i + 2 < n
                && p[i + 1] == 0xBB && p[i + 2] == 0xBF)
                return 0;
            continue;
        }
        if (c == 0x09 || c == 0x0B || c == 0x0C) return 0;
        if (i + 1 < n && p[i + 1] <= 0x20 && (c == 0x20 || p[i + 1] == 0x20)) return 0;
    }
    return 1;
}
