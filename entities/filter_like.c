/* SQL LIKE: '%' matches any run of characters, '_' exactly one, an escape
 * character makes the next pattern character literal.
 *
 * Greedy matching with one backtrack point (the last '%' seen): O(n*m) in
 * the worst case, no recursion and no allocation, whatever the pattern.
 * Characters are UTF-8 code points; comparison is case-sensitive, like '='.
 * An escape character at the very end of the pattern stands for itself. */
#include "filter_internal.h"

typedef enum elem_kind { ELEM_LITERAL, ELEM_ANY, ELEM_STAR } elem_kind;

/* Read one pattern element at pat[*i]. */
static elem_kind next_elem(const char *pat, size_t plen, size_t *i, int32_t esc, uint32_t *lit)
{
    uint32_t c = futf8_next(pat, plen, i);
    if (esc >= 0 && c == (uint32_t)esc) {
        if (*i < plen)
            c = futf8_next(pat, plen, i);
        *lit = c;
        return ELEM_LITERAL;
    }
    if (c == '%')
        return ELEM_STAR;
    if (c == '_')
        return ELEM_ANY;
    *lit = c;
    return ELEM_LITERAL;
}

int flike_match(const char *s, size_t slen, const char *pat, size_t plen, int32_t esc)
{
    size_t si = 0, pi = 0;
    size_t star_pi = 0, star_si = 0;
    int have_star = 0;

    while (si < slen) {
        if (pi < plen) {
            size_t next_pi = pi;
            uint32_t lit = 0;
            elem_kind k = next_elem(pat, plen, &next_pi, esc, &lit);
            if (k == ELEM_STAR) {
                have_star = 1;
                star_pi = next_pi;
                star_si = si;
                pi = next_pi;
                continue;
            }
            size_t next_si = si;
            uint32_t c = futf8_next(s, slen, &next_si);
            if (k == ELEM_ANY || c == lit) {
                si = next_si;
                pi = next_pi;
                continue;
            }
        }
        if (!have_star)
            return 0;
        /* Let the last '%' swallow one more character and retry after it. */
        futf8_next(s, slen, &star_si);
        si = star_si;
        pi = star_pi;
    }
    while (pi < plen) {
        uint32_t lit;
        if (next_elem(pat, plen, &pi, esc, &lit) != ELEM_STAR)
            return 0;
    }
    return 1;
}
