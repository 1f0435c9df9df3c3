/* libFuzzer target for Config.json, what a user hands the emulator at start:
 * comment stripping and the whole reader (emu_config_parse into an
 * ent_config, every entity property through the entities/ setters). What
 * parses must describe itself consistently: every subscription's rules name
 * it. ASan/UBSan/LSan catch the rest. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "emu_config_json.h"
#include "fuzz_check.h"

#define FUZZ_MAX_INPUT 262144

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT)
        return 0;
    char err[512];
    char *stripped = emu_config_strip_comments((const char *)data, size, err, sizeof err);
    free(stripped);
    ent_config cfg;
    ent_config_init(&cfg);
    if (!emu_config_parse((const char *)data, size, "fuzz", &cfg, err, sizeof err)) {
        for (size_t t = 0; t < cfg.ntopics; t++)
            for (size_t s = 0; s < cfg.topics[t].nsubscriptions; s++) {
                const ent_subscription_config *sc = &cfg.topics[t].subscriptions[s];
                for (size_t r = 0; r < sc->nrules; r++)
                    CHECK(!strcasecmp(sc->rules[r].subscription, sc->props.name));
            }
    }
    ent_config_free(&cfg);
    return 0;
}
