/* Where the entities to create at start come from, as Microsoft's emulator
 * image does it, so that its users swap the image without changing a line:
 * --config FILE if given ("none": no entities); else the file the official
 * image reads, when it exists; else the official image's default entities
 * (queue.1, and topic.1 with subscription.1 to .4 and their rules). */
#ifndef EMU_DEFAULT_CONFIG_H
#define EMU_DEFAULT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* The path inside Microsoft's image (docker compose mounts the user's file there). */
#define EMU_OFFICIAL_CONFIG_PATH "/ServiceBus_Emulator/ConfigFiles/Config.json"
/* --config none: start without creating any entity. */
#define EMU_CONFIG_NONE "none"

typedef enum emu_config_source {
    EMU_CONFIG_FROM_FILE,     /* *path: the file to read */
    EMU_CONFIG_FROM_DEFAULTS, /* emu_default_config_json() */
    EMU_CONFIG_FROM_NOTHING,  /* no entities created */
} emu_config_source;

/* given: --config (NULL when not given); official_exists: whether
 * EMU_OFFICIAL_CONFIG_PATH is a file. */
emu_config_source emu_config_choose(const char *given, bool official_exists, const char **path);

/* The official image's default Config.json, entity for entity (its own JSON). */
const char *emu_default_config_json(void);

#endif
