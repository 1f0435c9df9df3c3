/* Tokens of the rule language, and the error text that points into it.
 *
 * The lexer works on demand (the parser pulls one token at a time and peeks
 * by copying the lexer), keeps spans into the text and unescapes strings and
 * identifiers only when the parser asks, so that a peek costs no memory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_internal.h"

/* Longest token text quoted back in an "unexpected ..." message. */
#define DESCRIBE_MAX_CHARS 24
/* A numeric literal is copied to the stack for strtod. */
#define NUMBER_MAX_BYTES 64

/* ---- UTF-8 and positions -------------------------------------------------- */

uint32_t futf8_next(const char *s, size_t len, size_t *i)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t k = *i;
    unsigned char c = u[k];
    size_t n;
    uint32_t cp;

    if (c < 0x80) {
        *i = k + 1;
        return c;
    }
    if ((c & 0xE0) == 0xC0) {
        n = 1;
        cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 2;
        cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 3;
        cp = c & 0x07;
    } else {
        *i = k + 1;
        return c;
    }
    if (k + n >= len) {
        *i = k + 1;
        return c;
    }
    for (size_t j = 1; j <= n; j++) {
        if ((u[k + j] & 0xC0) != 0x80) {
            *i = k + 1;
            return c;
        }
        cp = (cp << 6) | (u[k + j] & 0x3F);
    }
    *i = k + n + 1;
    return cp;
}

size_t futf8_count(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        futf8_next(s, len, &i);
        n++;
    }
    return n;
}

void ferr_vset(ent_filter_error *err, ent_filter_err_kind kind, const char *text, size_t len, size_t pos,
               const char *fmt, va_list ap)
{
    if (!err)
        return;
    err->kind = kind;
    err->line = 0;
    err->column = 0;
    int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
    if (n < 0)
        n = 0;
    if (pos == FPOS_NONE || !text)
        return;
    if (pos > len)
        pos = len;

    size_t line_start = 0;
    int line = 1;
    for (size_t i = 0; i < pos; i++) {
        if (text[i] == '\n') {
            line++;
            line_start = i + 1;
        }
    }
    err->line = line;
    err->column = (int)futf8_count(text + line_start, pos - line_start) + 1;
    size_t used = (size_t)n < sizeof err->message ? (size_t)n : sizeof err->message - 1;
    if (line > 1)
        snprintf(err->message + used, sizeof err->message - used, " at line %d, column %d", line, err->column);
    else
        snprintf(err->message + used, sizeof err->message - used, " at column %d", err->column);
}

void ferr_set(ent_filter_error *err, ent_filter_err_kind kind, const char *text, size_t len, size_t pos,
              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ferr_vset(err, kind, text, len, pos, fmt, ap);
    va_end(ap);
}

/* ---- characters ------------------------------------------------------------ */

/* Identifiers allow Unicode letters; any non-ASCII byte counts as one, which
 * accepts every letter at the price of accepting some symbols too. */
static int is_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80; }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_ident_char(unsigned char c) { return is_letter(c) || is_digit(c) || c == '_'; }
static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

static char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

int fascii_ieq(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    if (alen != blen)
        return 0;
    for (size_t i = 0; i < alen; i++)
        if (ascii_lower(a[i]) != ascii_lower(b[i]))
            return 0;
    return 1;
}

static const struct {
    const char *word;
    ftok_type type;
} keywords[] = {
    {"and", TK_AND},   {"or", TK_OR},         {"not", TK_NOT},       {"is", TK_IS},
    {"null", TK_NULL}, {"in", TK_IN},         {"like", TK_LIKE},     {"escape", TK_ESCAPE},
    {"exists", TK_EXISTS}, {"true", TK_TRUE}, {"false", TK_FALSE},
};

static const char *const type_texts[] = {
    [TK_EOF] = "end of expression", [TK_ERROR] = "error", [TK_IDENT] = "identifier",
    [TK_QIDENT] = "quoted identifier", [TK_DIDENT] = "delimited identifier", [TK_STRING] = "string",
    [TK_INT] = "integer", [TK_DOUBLE] = "number", [TK_PARAM] = "parameter",
    [TK_LPAREN] = "'('", [TK_RPAREN] = "')'", [TK_COMMA] = "','", [TK_SEMI] = "';'", [TK_DOT] = "'.'",
    [TK_EQ] = "'='", [TK_NE] = "'<>'", [TK_LT] = "'<'", [TK_LE] = "'<='", [TK_GT] = "'>'", [TK_GE] = "'>='",
    [TK_PLUS] = "'+'", [TK_MINUS] = "'-'", [TK_STAR] = "'*'", [TK_SLASH] = "'/'", [TK_PERCENT] = "'%'",
    [TK_AND] = "AND", [TK_OR] = "OR", [TK_NOT] = "NOT", [TK_IS] = "IS", [TK_NULL] = "NULL", [TK_IN] = "IN",
    [TK_LIKE] = "LIKE", [TK_ESCAPE] = "ESCAPE", [TK_EXISTS] = "EXISTS", [TK_TRUE] = "TRUE", [TK_FALSE] = "FALSE",
};

const char *flex_type_text(ftok_type t)
{
    if ((unsigned)t < sizeof type_texts / sizeof type_texts[0] && type_texts[t])
        return type_texts[t];
    return "token";
}

void flex_init(flexer *lx, const char *text, size_t len, ent_filter_error *err)
{
    lx->text = text;
    lx->len = len;
    lx->pos = 0;
    lx->err = err;
}

static ftoken lex_error(flexer *lx, size_t pos, const char *fmt, const char *arg)
{
    ftoken t = {.type = TK_ERROR, .pos = pos, .len = 0};
    ferr_set(lx->err, ENT_FILTER_ERR_SYNTAX, lx->text, lx->len, pos, fmt, arg);
    lx->pos = lx->len; /* stop: every later token is end of text */
    return t;
}

/* Quoted forms: 'string', "ident", [ident]; the closing character doubled
 * stands for itself. */
static ftoken lex_quoted(flexer *lx, ftok_type type, char close, const char *what)
{
    size_t start = lx->pos;
    size_t i = start + 1;
    for (;;) {
        if (i >= lx->len)
            return lex_error(lx, start, "unterminated %s", what);
        if (lx->text[i] == close) {
            if (i + 1 < lx->len && lx->text[i + 1] == close) {
                i += 2;
                continue;
            }
            break;
        }
        i++;
    }
    lx->pos = i + 1;
    return (ftoken){.type = type, .pos = start, .len = lx->pos - start};
}

static ftoken lex_number(flexer *lx)
{
    size_t start = lx->pos, i = start;
    int is_double = 0;
    const char *s = lx->text;

    while (i < lx->len && is_digit((unsigned char)s[i]))
        i++;
    if (i < lx->len && s[i] == '.') {
        is_double = 1;
        i++;
        while (i < lx->len && is_digit((unsigned char)s[i]))
            i++;
    }
    if (i < lx->len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < lx->len && (s[j] == '+' || s[j] == '-'))
            j++;
        if (j >= lx->len || !is_digit((unsigned char)s[j]))
            return lex_error(lx, start, "malformed number%s", "");
        while (j < lx->len && is_digit((unsigned char)s[j]))
            j++;
        i = j;
        is_double = 1;
    }
    if (i < lx->len && (is_letter((unsigned char)s[i]) || s[i] == '_'))
        return lex_error(lx, start, "malformed number%s", "");

    ftoken t = {.pos = start, .len = i - start};
    lx->pos = i;
    if (!is_double) {
        uint64_t v = 0;
        const uint64_t limit = (uint64_t)1 << 63; /* |INT64_MIN| */
        for (size_t k = start; k < i; k++) {
            unsigned d = (unsigned)(s[k] - '0');
            if (v > (limit - d) / 10)
                return lex_error(lx, start, "integer constant out of range%s", "");
            v = v * 10 + d;
        }
        t.type = TK_INT;
        t.v.u = v;
        t.big = (v == limit);
        return t;
    }
    char buf[NUMBER_MAX_BYTES];
    if (t.len >= sizeof buf)
        return lex_error(lx, start, "number too long%s", "");
    memcpy(buf, s + start, t.len);
    buf[t.len] = 0;
    t.type = TK_DOUBLE;
    t.v.d = strtod(buf, NULL);
    if (isinf(t.v.d))
        return lex_error(lx, start, "number out of range%s", "");
    return t;
}

ftoken flex_next(flexer *lx)
{
    const char *s = lx->text;
    while (lx->pos < lx->len && is_space((unsigned char)s[lx->pos]))
        lx->pos++;
    size_t p = lx->pos;
    if (p >= lx->len)
        return (ftoken){.type = TK_EOF, .pos = lx->len};

    unsigned char c = (unsigned char)s[p];
    ftoken t = {.pos = p, .len = 1};
    if (is_letter(c)) {
        size_t i = p + 1;
        while (i < lx->len && is_ident_char((unsigned char)s[i]))
            i++;
        lx->pos = i;
        t.len = i - p;
        t.type = TK_IDENT;
        for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
            if (fascii_ieq(s + p, t.len, keywords[k].word))
                t.type = keywords[k].type;
        return t;
    }
    if (is_digit(c) || (c == '.' && p + 1 < lx->len && is_digit((unsigned char)s[p + 1])))
        return lex_number(lx);

    switch (c) {
    case '\'': return lex_quoted(lx, TK_STRING, '\'', "string constant");
    case '"': return lex_quoted(lx, TK_QIDENT, '"', "quoted identifier");
    case '[': return lex_quoted(lx, TK_DIDENT, ']', "delimited identifier");
    case '@': {
        size_t i = p + 1;
        while (i < lx->len && is_ident_char((unsigned char)s[i]))
            i++;
        if (i == p + 1)
            return lex_error(lx, p, "expected a parameter name after '@'%s", "");
        lx->pos = i;
        t.type = TK_PARAM;
        t.len = i - p;
        return t;
    }
    case '(': t.type = TK_LPAREN; break;
    case ')': t.type = TK_RPAREN; break;
    case ',': t.type = TK_COMMA; break;
    case ';': t.type = TK_SEMI; break;
    case '.': t.type = TK_DOT; break;
    case '=': t.type = TK_EQ; break;
    case '+': t.type = TK_PLUS; break;
    case '-': t.type = TK_MINUS; break;
    case '*': t.type = TK_STAR; break;
    case '/': t.type = TK_SLASH; break;
    case '%': t.type = TK_PERCENT; break;
    case '<':
        t.type = TK_LT;
        if (p + 1 < lx->len && s[p + 1] == '=') {
            t.type = TK_LE;
            t.len = 2;
        } else if (p + 1 < lx->len && s[p + 1] == '>') {
            t.type = TK_NE;
            t.len = 2;
        }
        break;
    case '>':
        t.type = TK_GT;
        if (p + 1 < lx->len && s[p + 1] == '=') {
            t.type = TK_GE;
            t.len = 2;
        }
        break;
    case '!':
        if (p + 1 < lx->len && s[p + 1] == '=') {
            t.type = TK_NE;
            t.len = 2;
            break;
        }
        return lex_error(lx, p, "unexpected character '%s'", "!");
    default: {
        char shown[8];
        size_t i = p;
        futf8_next(s, lx->len, &i);
        size_t n = i - p;
        if (c < 0x20 || c == 0x7F) {
            snprintf(shown, sizeof shown, "\\x%02X", c);
        } else {
            memcpy(shown, s + p, n);
            shown[n] = 0;
        }
        return lex_error(lx, p, "unexpected character '%s'", shown);
    }
    }
    lx->pos = p + t.len;
    return t;
}

size_t flex_unescape(const flexer *lx, const ftoken *tok, char *dst)
{
    const char *s = lx->text + tok->pos;
    size_t n = tok->len;
    char close;

    switch (tok->type) {
    case TK_STRING: close = '\''; break;
    case TK_QIDENT: close = '"'; break;
    case TK_DIDENT: close = ']'; break;
    case TK_PARAM:
        memcpy(dst, s + 1, n - 1);
        return n - 1;
    default:
        memcpy(dst, s, n);
        return n;
    }
    size_t out = 0;
    for (size_t i = 1; i + 1 < n; i++) {
        dst[out++] = s[i];
        if (s[i] == close)
            i++; /* the doubled closer */
    }
    return out;
}

void flex_describe(const flexer *lx, const ftoken *tok, char *buf, size_t cap)
{
    if (tok->type == TK_EOF || tok->type == TK_ERROR) {
        snprintf(buf, cap, "%s", flex_type_text(tok->type));
        return;
    }
    size_t n = 0, chars = 0;
    while (n < tok->len && chars < DESCRIBE_MAX_CHARS) {
        futf8_next(lx->text + tok->pos, tok->len, &n);
        chars++;
    }
    if (n > tok->len)
        n = tok->len;
    snprintf(buf, cap, "'%.*s%s'", (int)n, lx->text + tok->pos, n < tok->len ? "..." : "");
}
