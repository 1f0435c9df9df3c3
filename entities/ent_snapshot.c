/* See ent_snapshot.h. */
#include "ent_snapshot.h"

#include <string.h>
#include <strings.h>


static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
}

sb_status ent_snapshot_name_check(const char *name, char *why, size_t whylen)
{
    if (!name || !*name)
        return ent_fail_status(SB_ERR_ARGUMENT, why, whylen, "A snapshot needs a name.");
    size_t n = strlen(name);
    if (n > ENT_SNAPSHOT_NAME_MAX)
        return ent_fail_status(SB_ERR_ARGUMENT, why, whylen,
                               "The snapshot name is %zu characters long; the most is %d.", n, ENT_SNAPSHOT_NAME_MAX);
    for (size_t i = 0; i < n; i++)
        if (!name_char(name[i]))
            return ent_fail_status(SB_ERR_ARGUMENT, why, whylen,
                                   "The snapshot name '%.*s' holds '%c' at position %zu: a name is made of letters, "
                                   "digits, '.', '_' and '-'.",
                                   ENT_SNAPSHOT_NAME_MAX, name, name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?',
                                   i + 1);
    if (!name_char(name[0]) || name[0] == '.' || name[0] == '_' || name[0] == '-')
        return ent_fail_status(SB_ERR_ARGUMENT, why, whylen,
                               "The snapshot name '%s' must start with a letter or a digit.", name);
    return SB_OK;
}
