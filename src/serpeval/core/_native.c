/* serpeval's compiled kernels: plain C, no Python headers, loaded with ctypes by
 * serpeval/core/native.py. Built at install time by hatch_build.py with the machine's C
 * compiler; when it is absent or fails, serpeval runs the NumPy implementations in
 * serpeval/core/arrays.py, which these kernels must match bit for bit (tests/core/test_native.py).
 *
 * Strings are Arrow string arrays: int32 offsets (already moved by the array's offset) and
 * the data buffer. Every function works on caller-owned memory; sv_group and sv_match also
 * allocate a scratch buffer of their own (returning -1 when that fails).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SV_ABI 15
#define MIX 0x9E3779B97F4A7C15ULL
#define MIX2 0xC2B2AE3D27D4EB4FULL
#define AHEAD 8 /* rows: the distance between the prefetch stages of sv_probe */

int64_t sv_abi(void) { return SV_ABI; }

/* The fingerprint of one string (serpeval.core.fingerprints.fingerprint): h = len * M, then for
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

/* out[i] = fingerprint of string i, or of string order[i] where order is given; with codes,
 * the (query code, doc) pair key serpeval.core.fingerprints.pair_key: fingerprint ^ (uint64)codes[i]
 * * MIX2. */
void sv_fingerprint(int64_t n, const int32_t *offsets, const uint8_t *data,
                    const int32_t *codes, const int64_t *order, uint64_t *out) {
    for (int64_t i = 0; i < n; i++) {
        int64_t j = order ? order[i] : i;
        uint64_t h = fingerprint_one(data + offsets[j], (int64_t)offsets[j + 1] - offsets[j]);
        if (codes) h ^= (uint64_t)(int64_t)codes[i] * MIX2;
        out[i] = h;
    }
}

/* The sum (mod 2^64) of the row hashes of serpeval.core.fingerprints.signature_part, one
 * pass: row i has query fingerprint q = q_prints[q_codes[i]] (q_prints[i] without codes),
 * doc fingerprint d_prints[i] and value values[v_order[i]] (values[i] without an order);
 * r = fin(mix(mix(q * M ^ d) ^ bits(v + 0.0))), with row position first_row + i mixed in
 * before fin when ordered. */
static inline uint64_t sign_mix(uint64_t h) { h *= MIX; return h ^ (h >> 31); }

uint64_t sv_sign_rows(int64_t n, const uint64_t *q_prints, const int32_t *q_codes,
                      const uint64_t *d_prints, const double *values, const int64_t *v_order,
                      int64_t ordered, int64_t first_row) {
    uint64_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t q = q_codes ? q_prints[q_codes[i]] : q_prints[i];
        double v = (v_order ? values[v_order[i]] : values[i]) + 0.0; /* -0.0 -> 0.0 */
        uint64_t bits;
        memcpy(&bits, &v, 8);
        uint64_t h = sign_mix(q * MIX ^ d_prints[i]);
        h = sign_mix(h ^ bits);
        if (ordered) h = sign_mix(h ^ ((uint64_t)(first_row + i) * MIX2));
        h ^= h >> 30;
        h *= 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 27;
        h *= 0x94D049BB133111EBULL;
        h ^= h >> 31;
        total += h;
    }
    return total;
}

/* Probe serpeval.core.hash_index.KeyTable (linear probing; slot_rows[slot] is a row or `empty`,
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
        /* Memory latency dominates (five random reads per row), so the reads of later rows
         * are started early in three stages: the home slot, then the row's key, offsets and
         * code, then its bytes; each stage reads what the previous one brought in. */
        if (i + 3 * AHEAD < n) __builtin_prefetch(slot_rows + (keys[i + 3 * AHEAD] >> shift));
        if (i + 2 * AHEAD < n) {
            int32_t ahead = slot_rows[keys[i + 2 * AHEAD] >> shift];
            __builtin_prefetch(table_keys + ahead);
            __builtin_prefetch(b_offsets + ahead);
            if (b_codes) __builtin_prefetch(b_codes + ahead);
        }
        if (i + AHEAD < n) {
            int32_t ahead = slot_rows[keys[i + AHEAD] >> shift];
            if (table_keys[ahead]) __builtin_prefetch(b_data + b_offsets[ahead]);
        }
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

/* Group strings by query: a counting sort of rows by code (0 <= code < n_groups), then each
 * group's rows sorted by (fingerprint, row). offsets[g]..offsets[g + 1] index perm and
 * sorted_prints; perm holds rows, sorted_prints their fingerprints. */
static int by_print(const void *a, const void *b) {
    const uint64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : (x[1] > y[1]);
}

int64_t sv_group(int64_t n, const int32_t *codes, const uint64_t *prints, int64_t n_groups,
                 int64_t *offsets, int32_t *perm, uint64_t *sorted_prints) {
    memset(offsets, 0, (size_t)(n_groups + 1) * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) offsets[codes[i] + 1]++;
    for (int64_t g = 0; g < n_groups; g++) offsets[g + 1] += offsets[g];
    for (int64_t i = 0; i < n; i++) perm[offsets[codes[i]]++] = (int32_t)i;
    for (int64_t g = n_groups; g > 0; g--) offsets[g] = offsets[g - 1];
    offsets[0] = 0;
    uint64_t *pairs = NULL;
    int64_t pairs_size = 0;
    for (int64_t g = 0; g < n_groups; g++) {
        int64_t start = offsets[g], len = offsets[g + 1] - start;
        int32_t *rows = perm + start;
        uint64_t *out = sorted_prints + start;
        if (len <= 16) { /* insertion sort by (print, row); rows arrive ascending */
            for (int64_t i = 0; i < len; i++) {
                int32_t row = rows[i];
                uint64_t p = prints[row];
                int64_t j = i;
                while (j > 0 && out[j - 1] > p) {
                    out[j] = out[j - 1];
                    rows[j] = rows[j - 1];
                    j--;
                }
                out[j] = p;
                rows[j] = row;
            }
            continue;
        }
        if (len > pairs_size) {
            free(pairs);
            pairs = malloc((size_t)len * 2 * sizeof(uint64_t));
            if (!pairs) return -1;
            pairs_size = len;
        }
        for (int64_t i = 0; i < len; i++) {
            pairs[2 * i] = prints[rows[i]];
            pairs[2 * i + 1] = (uint64_t)rows[i];
        }
        qsort(pairs, (size_t)len, 2 * sizeof(uint64_t), by_print);
        for (int64_t i = 0; i < len; i++) {
            out[i] = pairs[2 * i];
            rows[i] = (int32_t)pairs[2 * i + 1];
        }
    }
    free(pairs);
    return 0;
}

/* The grade of every run row (serpeval.ranking's rules): the row r of the grouped strings
 * (sv_group) in the group codes[i] whose string equals string a[i] (a[a_order[i]] where
 * a_order is given: the rows in rank order) byte for byte gives grades[r], or `unjudged`
 * where that is negative; no such row (or codes[i] < 0) gives `nonpool` (should two rows
 * match, the lowest one counts). `out` may be `prints` itself: a row's fingerprint is read
 * before its grade is written.
 *
 * Rows come in blocks of one code (a query's lines). A block that is long next to its
 * group (at least a quarter of the group's size, and the group more than 8 strings) looks its
 * rows up in a small hash table of the group's fingerprints, built for the block (one
 * probe per row, independent of the other rows); a group of up to 8 is compared whole; other
 * rows search the group's sorted fingerprints by halving. Every candidate with an equal fingerprint is compared on the
 * bytes. Returns 0, or -1 when out of memory. */
static int32_t confirm(const uint8_t *s, int64_t len, int32_t row, int32_t found,
                       const int32_t *b_offsets, const uint8_t *b_data) {
    if ((int64_t)b_offsets[row + 1] - b_offsets[row] != len) return found;
    if (len && memcmp(s, b_data + b_offsets[row], (size_t)len) != 0) return found;
    return found < 0 || row < found ? row : found;
}

int64_t sv_match(int64_t n, const int32_t *codes, const uint64_t *prints, const int32_t *a_offsets,
                 const uint8_t *a_data, const int64_t *a_order, const int64_t *offsets, const int32_t *perm,
                 const uint64_t *sorted_prints, const int32_t *b_offsets, const uint8_t *b_data,
                 const int64_t *grades, int64_t nonpool, int64_t unjudged, int64_t *out) {
    int32_t *slots = NULL;
    int64_t slots_size = 0;
    int64_t i = 0;
    while (i < n) {
        int32_t code = codes[i];
        int64_t end = i + 1;
        while (end < n && codes[end] == code) end++;
        if (code < 0) {
            for (; i < end; i++) out[i] = nonpool;
            continue;
        }
        int64_t lo = offsets[code], stop = offsets[code + 1], len = stop - lo;
        int bits = 0;
        if (len > 8 && 4 * (end - i) >= len) {
            bits = 4;
            while (((int64_t)1 << bits) < 2 * len) bits++;
            if (((int64_t)1 << bits) > slots_size) {
                free(slots);
                slots_size = (int64_t)1 << bits;
                slots = calloc((size_t)slots_size, sizeof(int32_t));
                if (!slots) return -1;
            }
            uint64_t mask = ((uint64_t)1 << bits) - 1;
            for (int64_t t = lo; t < stop; t++) { /* slot holds t - lo + 1; 0 is empty */
                uint64_t slot = sorted_prints[t] >> (64 - bits);
                while (slots[slot]) slot = (slot + 1) & mask;
                slots[slot] = (int32_t)(t - lo + 1);
            }
        }
        for (; i < end; i++) {
            uint64_t p = prints[i];
            int64_t j = a_order ? a_order[i] : i; /* row i's string */
            const uint8_t *s = a_data + a_offsets[j];
            int64_t slen = (int64_t)a_offsets[j + 1] - a_offsets[j];
            int32_t found = -1;
            if (bits) {
                uint64_t mask = ((uint64_t)1 << bits) - 1, slot = p >> (64 - bits);
                for (int32_t e; (e = slots[slot]) != 0; slot = (slot + 1) & mask)
                    if (sorted_prints[lo + e - 1] == p)
                        found = confirm(s, slen, perm[lo + e - 1], found, b_offsets, b_data);
            } else if (len <= 8) { /* a few judgments: compare them all */
                for (int64_t t = lo; t < stop; t++)
                    if (sorted_prints[t] == p) found = confirm(s, slen, perm[t], found, b_offsets, b_data);
            } else {
                int64_t at = lo, left = len;
                if (left > 0) { /* at: the first position whose print is >= p (branch-free halving) */
                    const uint64_t *first = sorted_prints + lo;
                    while (left > 1) {
                        int64_t half = left / 2;
                        first = first[half - 1] < p ? first + half : first;
                        left -= half;
                    }
                    at = (int64_t)(first - sorted_prints) + (*first < p);
                }
                for (; at < stop && sorted_prints[at] == p; at++)
                    found = confirm(s, slen, perm[at], found, b_offsets, b_data);
            }
            out[i] = found < 0 ? nonpool : (grades[found] < 0 ? unjudged : grades[found]);
        }
        if (bits) memset(slots, 0, ((size_t)1 << bits) * sizeof(int32_t));
    }
    free(slots);
    return 0;
}

/* The first position p whose key occurs earlier in its segment offsets[s]..offsets[s + 1],
 * or -1. Keys are compared with their lowest bit set (so two keys that differ only there
 * count as a repeat: callers confirm). `scratch` holds at least the smallest power of two
 * >= 2 * the longest segment (and >= 16) entries. */
int64_t sv_first_repeat(const uint64_t *keys, const int64_t *offsets, int64_t n_segments, uint64_t *scratch) {
#define KEY(i) (keys[i] | 1)
    for (int64_t s = 0; s < n_segments; s++) {
        int64_t start = offsets[s], stop = offsets[s + 1], len = stop - start;
        if (len < 2) continue;
        if (len <= 8) { /* short rankings: compare pairwise */
            for (int64_t i = start + 1; i < stop; i++)
                for (int64_t j = start; j < i; j++)
                    if (KEY(i) == KEY(j)) return i;
            continue;
        }
        int bits = 4;
        while (((int64_t)1 << bits) < 2 * len) bits++;
        uint64_t size = (uint64_t)1 << bits, mask = size - 1;
        memset(scratch, 0, size * sizeof(uint64_t));
        for (int64_t i = start; i < stop; i++) {
            uint64_t key = KEY(i);
            uint64_t slot = key >> (64 - bits);
            while (scratch[slot]) {
                if (scratch[slot] == key) return i;
                slot = (slot + 1) & mask;
            }
            scratch[slot] = key;
        }
    }
    return -1;
#undef KEY
}

/* Sort each segment offsets[s]..offsets[s + 1] of `values` in place, descending. */
static int descending(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

void sv_sort_descending(int64_t *values, const int64_t *offsets, int64_t n_segments) {
    for (int64_t s = 0; s < n_segments; s++) {
        int64_t start = offsets[s], len = offsets[s + 1] - start;
        int64_t *v = values + start;
        if (len > 16) {
            qsort(v, (size_t)len, sizeof(int64_t), descending);
            continue;
        }
        for (int64_t i = 1; i < len; i++) {
            int64_t x = v[i], j = i;
            while (j > 0 && v[j - 1] < x) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
    }
}

/* The 0-based position of every element within its segment (offsets[s]..offsets[s + 1]). */
void sv_positions(const int64_t *offsets, int64_t n_segments, int64_t *out) {
    for (int64_t s = 0; s < n_segments; s++)
        for (int64_t i = offsets[s]; i < offsets[s + 1]; i++) out[i] = i - offsets[s];
}

/* Rows of whole blocks laid out one after another: block b (rows first[b] ..
 * first[b] + lengths[b] - 1) goes to positions starts[b] ... of `order`. */
void sv_place_blocks(const int64_t *first, const int64_t *lengths, const int64_t *starts,
                     int64_t n_blocks, int64_t *order) {
    for (int64_t b = 0; b < n_blocks; b++) {
        int64_t *out = order + starts[b], row = first[b];
        for (int64_t j = 0; j < lengths[b]; j++) out[j] = row + j;
    }
}

/* Running sums within segments (serpeval.measures._segments.prefix_sums): element j of a
 * segment is ((0 + v_0) + v_1) + ... + v_j, added in that order. */
void sv_prefix_sums(const double *values, const int64_t *offsets, int64_t n_segments, double *out) {
    for (int64_t s = 0; s < n_segments; s++) {
        double sum = 0.0;
        for (int64_t i = offsets[s]; i < offsets[s + 1]; i++) {
            sum += values[i];
            out[i] = sum;
        }
    }
}

/* For increasing flat indices `index` into segments cut at `offsets` (non-decreasing):
 * the segment of each index, and where each segment's indices start (`starts`, one more
 * entry than segments): one merge of the two sorted lists. */
void sv_locate(const int64_t *index, int64_t n, const int64_t *offsets, int64_t n_segments,
               int64_t *segment, int64_t *starts) {
    int64_t s = 0;
    for (int64_t i = 0; i < n; i++) {
        while (s < n_segments && offsets[s + 1] <= index[i]) starts[++s] = i;
        segment[i] = s;
    }
    while (s < n_segments) starts[++s] = n;
    starts[0] = 0;
}

/* serpeval.io.trec's single-space test on one slice of a file: 0 when the slice has a tab,
 * vertical tab or form feed, two neighbouring bytes <= 0x20 one of which is a space, or a
 * UTF-8 byte order mark right after a line feed or carriage return; else 1. */
static int single_spaced_range(const uint8_t *p, int64_t n, int64_t from, int64_t to) {
    for (int64_t i = from; i < to; i++) {
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

int64_t sv_single_spaced(const uint8_t *p, int64_t n) {
    /* Blocks of 64 bytes are screened branch-free (the compiler vectorizes the loop); only a
     * block with a suspect byte (a tab, VT, FF, a pair of low bytes with a space, or 0xEF,
     * which may start a mark) is checked byte by byte. */
    enum { BLOCK = 64 };
    int64_t i = 0;
    for (; i + BLOCK + 1 <= n; i += BLOCK) {
        uint8_t suspect = 0;
        for (int j = 0; j < BLOCK; j++) {
            uint8_t c = p[i + j], d = p[i + j + 1];
            suspect |= (uint8_t)((c == 0x09) | (c == 0x0B) | (c == 0x0C) | (c == 0xEF)
                                 | ((c <= 0x20) & (d <= 0x20) & ((c == 0x20) | (d == 0x20))));
        }
        if (suspect && !single_spaced_range(p, n, i, i + BLOCK)) return 0;
    }
    return single_spaced_range(p, n, i, n);
}
