/* serpeval's TREC text reader (part of the _native library; see _native.c): the rows of a qrels
 * (qid iter docid rel) or run (qid Q0 docid rank score tag) file, read with the rules of the
 * careful reader in serpeval/io/trec.py, which stays the reference and the one that writes
 * error messages. Any line this reader does not take as a plain data row (a NaN score, a
 * comment where comments are refused, ids that are not UTF-8, a wrong number of columns, a
 * grade that is not a decimal integer or is beyond 2^53 - 1, a score with '_' or in any other
 * spelling) makes it stop with SV_REFUSED; the caller then reads the file with the careful
 * reader, which either reads it the same way or names the line.
 *
 * Rules (as the careful reader's bytes.splitlines() and bytes.split()):
 *   - a line ends at LF, CR or CRLF; a last line without an end counts when it is not empty;
 *   - a UTF-8 byte order mark at the very start of a line is dropped;
 *   - fields are separated by runs of space, tab, vertical tab and form feed;
 *   - a line without fields is blank, a line whose first field starts with '#' a comment:
 *     both are skipped and counted;
 *   - runs: at least 6 fields (the 1st, 3rd and 5th are kept); qrels: exactly 4 (1st, 3rd, 4th).
 *
 * Scores are read as Python's float() reads them (correctly rounded): a decimal with at most
 * 19 significant digits whose value m * 10^e has m <= 2^53 and |e| <= 22 is one exact IEEE
 * operation (m and 10^|e| are exact doubles); any other decimal goes to strtod, which glibc
 * rounds correctly too (the caller makes sure the C locale's decimal point is '.').
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { SV_NEED_INPUT = 0, SV_FULL = 1, SV_CHUNK_FULL = 2, SV_REFUSED = 3 };
enum { ST_ROWS, ST_ROW_CAP, ST_Q_BYTES, ST_Q_CAP, ST_D_BYTES, ST_D_CAP, ST_SKIPPED, ST_STOP,
       ST_CHUNK_LIMIT, ST_Q_NEED, ST_D_NEED, ST_Q_BLOCKS };

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Well-formed UTF-8 (Unicode table 3-7), what Python's strict decode accepts. */
static int utf8_ok(const uint8_t *s, int64_t n) {
    int64_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) { i++; continue; }
        int more;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) more = 1;
        else if (c == 0xE0) { more = 2; lo = 0xA0; }
        else if (c == 0xED) { more = 2; hi = 0x9F; }
        else if (c >= 0xE1 && c <= 0xEF) more = 2;
        else if (c == 0xF0) { more = 3; lo = 0x90; }
        else if (c >= 0xF1 && c <= 0xF3) more = 3;
        else if (c == 0xF4) { more = 3; hi = 0x8F; }
        else return 0;
        if (i + more >= n) return 0; /* cut short */
        if (s[i + 1] < lo || s[i + 1] > hi) return 0;
        for (int k = 2; k <= more; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF) return 0;
        i += more + 1;
    }
    return 1;
}

static int same_letters(const uint8_t *s, const char *word, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if ((s[i] | 0x20) != (uint8_t)word[i]) return 0;
    return 1;
}

/* A score as Python's float() reads it: 1 and *out, or 0 when this reader does not take it
 * (NaN, '_', hexadecimal, a spelling float() refuses, over 63 bytes): the careful reader
 * then reads or refuses it. */
static int parse_score(const uint8_t *s, int64_t n, double *out) {
    int64_t i = 0;
    int negative = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    if (i < n && (s[i] | 0x20) == 'i') { /* inf, infinity, in any case */
        if ((n - i == 3 && same_letters(s + i, "inf", 3)) || (n - i == 8 && same_letters(s + i, "infinity", 8))) {
            *out = negative ? -INFINITY : INFINITY;
            return 1;
        }
        return 0;
    }
    uint64_t m = 0;       /* the significant digits, while there are at most 19 */
    int digits = 0;       /* significant digits seen (leading zeros are not) */
    int64_t scale = 0;    /* minus the digits of m after the point (m * 10^scale) */
    int any = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, any = 1)
        if (m || s[i] != '0') {
            if (++digits <= 19) m = m * 10 + (uint64_t)(s[i] - '0'); /* beyond: strtod reads it */
        }
    if (i < n && s[i] == '.') {
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, any = 1) {
            if (m || s[i] != '0') {
                if (++digits <= 19) { m = m * 10 + (uint64_t)(s[i] - '0'); scale--; }
            } else {
                scale--;
            }
        }
    }
    if (!any) return 0;
    int64_t exponent = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        int exp_negative = 0, exp_any = 0;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) exp_negative = s[i++] == '-';
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, exp_any = 1)
            if (exponent < 100000) exponent = exponent * 10 + (s[i] - '0');
        if (!exp_any) return 0;
        if (exp_negative) exponent = -exponent;
    }
    if (i != n) return 0;
    if (m == 0) { /* every digit zero: any exponent gives zero */
        *out = negative ? -0.0 : 0.0;
        return 1;
    }
    int64_t e10 = scale + exponent;
#if FLT_EVAL_METHOD == 0
    if (digits <= 19 && m <= (1ULL << 53) && e10 >= -22 && e10 <= 22) {
        double value = e10 >= 0 ? (double)m * POW10[e10] : (double)m / POW10[-e10];
        *out = negative ? -value : value;
        return 1;
    }
#endif
    char text[64];
    if (n >= (int64_t)sizeof text) return 0;
    memcpy(text, s, (size_t)n);
    text[n] = 0;
    char *end;
    *out = strtod(text, &end);
    return end == text + n;
}

/* A grade: optional sign and decimal digits, within +-(2^53 - 1). 1 and *out, or 0. */
static int parse_grade(const uint8_t *s, int64_t n, int64_t *out) {
    const int64_t limit = (INT64_C(1) << 53) - 1;
    int64_t i = 0, value = 0;
    int negative = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    if (i == n) return 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        value = value * 10 + (s[i] - '0');
        if (value > limit) return 0;
    }
    *out = negative ? -value : value;
    return 1;
}

/* Byte classes: 0 a field's byte, 1 a separator, 2 a line end. */
static const uint8_t byte_class[256] = {[' '] = 1, ['\t'] = 1, [0x0B] = 1, [0x0C] = 1, ['\n'] = 2, ['\r'] = 2};

/* Read the complete lines of p[0..n) (final: n is the end of the file, so a last line needs
 * no line end). columns: 6 for a run, 4 for qrels. st: the state (ST_* above; the caller
 * sets the capacities and the chunk limit, and zeroes the counts of a new chunk). Rows are
 * written at st[ST_ROWS]: the doc id's bytes and int32 end offset, the score (double) or
 * grade (int64). Query ids are written once per block of equal neighbouring rows (files are
 * nearly always grouped by query): block k's id is q_data[q_off[k]..q_off[k+1]) and its rows
 * end before row q_ends[k] of the chunk; st[ST_Q_BLOCKS] counts the blocks (q_off and q_ends
 * have room for one block per row). Returns the bytes consumed, whole lines only;
 * st[ST_STOP] says why it stopped. */
int64_t sv_read_trec(const uint8_t *p, int64_t n, int64_t final, int64_t columns, int64_t comments, int64_t *st,
                     int32_t *q_off, uint8_t *q_data, int32_t *q_ends, int32_t *d_off, uint8_t *d_data,
                     void *numbers) {
    int64_t rows = st[ST_ROWS], q_bytes = st[ST_Q_BYTES], d_bytes = st[ST_D_BYTES], blocks = st[ST_Q_BLOCKS];
    int64_t skipped = st[ST_SKIPPED];
    int64_t at = 0, stop = SV_NEED_INPUT;
    if (rows == 0) q_off[0] = d_off[0] = 0;
    while (at < n) {
        int64_t i = at;
        /* A byte order mark at the start of the line is dropped (one cut by the end of the
         * data is not seen here, but then neither is the line's end: it is read again). */
        if (i + 2 < n && p[i] == 0xEF && p[i + 1] == 0xBB && p[i + 2] == 0xBF) i += 3;
        int64_t start[6], len[6];
        uint8_t high[6]; /* the OR of a field's bytes: 0x80 set when it is not ASCII */
        int fields = 0;
        for (;;) {
            while (i < n && byte_class[p[i]] == 1) i++;
            if (i == n || byte_class[p[i]] == 2) break;
            int64_t from = i;
            uint8_t bits = 0;
            for (; i < n && byte_class[p[i]] == 0; i++) bits |= p[i];
            if (fields < 6) { start[fields] = from; len[fields] = i - from; high[fields] = bits & 0x80; }
            fields++;
        }
        int64_t next; /* where the next line starts */
        if (i == n) {
            if (!final) break; /* the line goes on past the data */
            next = n;
        } else if (p[i] == '\r') {
            if (i + 1 == n && !final) break; /* CR LF, perhaps */
            next = (i + 1 < n && p[i + 1] == '\n') ? i + 2 : i + 1;
        } else {
            next = i + 1;
        }
        if (fields == 0 || p[start[0]] == '#') {
            if (fields && !comments) { stop = SV_REFUSED; break; }
            skipped++;
            at = next;
            continue;
        }
        if (columns == 6 ? fields < 6 : fields != 4) { stop = SV_REFUSED; break; }
        const uint8_t *qid = p + start[0], *doc = p + start[2];
        int64_t q_len = len[0], d_len = len[2];
        if ((high[0] && !utf8_ok(qid, q_len)) || (high[2] && !utf8_ok(doc, d_len))) { stop = SV_REFUSED; break; }
        if (rows >= st[ST_ROW_CAP] || q_bytes + q_len > st[ST_Q_CAP] || d_bytes + d_len > st[ST_D_CAP]) {
            stop = SV_FULL; /* the caller makes room for q_bytes + q_len and d_bytes + d_len */
            st[ST_Q_NEED] = q_bytes + q_len;
            st[ST_D_NEED] = d_bytes + d_len;
            break;
        }
        if (q_bytes + q_len > st[ST_CHUNK_LIMIT] || d_bytes + d_len > st[ST_CHUNK_LIMIT]) {
            stop = rows ? SV_CHUNK_FULL : SV_REFUSED; /* refused: one id over the limit */
            break;
        }
        if (columns == 6) {
            if (!parse_score(p + start[4], len[4], (double *)numbers + rows)) { stop = SV_REFUSED; break; }
        } else if (!parse_grade(p + start[3], len[3], (int64_t *)numbers + rows)) {
            stop = SV_REFUSED;
            break;
        }
        if (!blocks || q_len != q_off[blocks] - q_off[blocks - 1] ||
            memcmp(q_data + q_off[blocks - 1], qid, (size_t)q_len) != 0) {
            memcpy(q_data + q_bytes, qid, (size_t)q_len); /* a new block */
            q_bytes += q_len;
            blocks++;
            q_off[blocks] = (int32_t)q_bytes;
        }
        memcpy(d_data + d_bytes, doc, (size_t)d_len);
        d_bytes += d_len;
        rows++;
        q_ends[blocks - 1] = (int32_t)rows;
        d_off[rows] = (int32_t)d_bytes;
        at = next;
    }
    st[ST_Q_BLOCKS] = blocks;
    st[ST_ROWS] = rows;
    st[ST_Q_BYTES] = q_bytes;
    st[ST_D_BYTES] = d_bytes;
    st[ST_SKIPPED] = skipped;
    st[ST_STOP] = stop;
    return at;
}
