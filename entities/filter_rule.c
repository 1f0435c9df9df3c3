/* Rules (name + filter + action), including the "$Default" rule that every
 * new subscription gets (topic-filters.md). Above the filters and actions it
 * holds. */
#include <string.h>

#include "ent_alloc.h"
#include "filter_internal.h"

int ent_filter_rule_init(ent_filter_rule *r, const char *name, ent_filter *filter, ent_filter_action *action,
                         ent_filter_error *err)
{
    memset(r, 0, sizeof *r);
    if (err)
        memset(err, 0, sizeof *err);
    size_t n = name ? strlen(name) : 0;
    size_t chars = name ? futf8_count(name, n) : 0;
    if (n == 0 || chars > ENT_RULE_NAME_MAX || n >= sizeof r->name || !filter) {
        if (!filter)
            ferr_set(err, ENT_FILTER_ERR_SYNTAX, NULL, 0, FPOS_NONE, "a rule needs a filter");
        else if (n == 0)
            ferr_set(err, ENT_FILTER_ERR_SYNTAX, NULL, 0, FPOS_NONE, "a rule needs a name");
        else
            ferr_set(err, ENT_FILTER_ERR_LIMIT, NULL, 0, FPOS_NONE,
                     "rule name is %zu characters long; the limit is %d", chars, ENT_RULE_NAME_MAX);
        ent_filter_free(filter);
        ent_filter_action_free(action);
        return -1;
    }
    memcpy(r->name, name, n + 1);
    r->filter = filter;
    r->action = action;
    return 0;
}

int ent_filter_rule_init_default(ent_filter_rule *r)
{
    ent_filter *t = ent_filter_new_true();
    if (!t) {
        memset(r, 0, sizeof *r);
        return -1;
    }
    return ent_filter_rule_init(r, ENT_FILTER_DEFAULT_RULE_NAME, t, NULL, NULL);
}

void ent_filter_rule_free(ent_filter_rule *r)
{
    ent_filter_free(r->filter);
    ent_filter_action_free(r->action);
    memset(r, 0, sizeof *r);
}
