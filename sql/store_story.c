/* See store_story.h: whether the story is recorded (the queries are
 * store_story_query.c's: this file needs no store, so that what only asks
 * whether to tell the story links without one). */
#include "store_story.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "ent_alloc.h"

/* Set once before the store opens and read on the loop's thread only. */
static bool story_on;

void store_story_set_on(bool on) { story_on = on; }
bool store_story_on(void) { return story_on; }

const char *store_story_link(const char *link)
{
    size_t len = link ? strlen(link) : 0;
    return len && ent_story_text_keep(link, len, ENT_STORY_LINK_MAX) == len ? link : NULL;
}
