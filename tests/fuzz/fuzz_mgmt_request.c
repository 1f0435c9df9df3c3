/* libFuzzer target for what a client puts in a management or CBS request:
 * the bytes are decoded as an AMQP value (as the management node decodes a
 * request body) and read as an add-rule request (mgmt_rule_def_decode: the
 * rule name, filter, correlation properties, parameters and action, each
 * parsed with the rule language); the same bytes, as text, are checked as a
 * SAS token (amqp_sas_verify, what $cbs put-token does). A decoded rule must
 * carry a name that passes the name check. ASan/UBSan/LSan catch the rest. */
#include <proton/codec.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amqp_sas.h"
#include "mgmt_rules.h"
#include "fuzz_check.h"

#define FUZZ_MAX_INPUT 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX_INPUT)
        return 0;
    pn_data_t *body = pn_data(16);
    if (pn_data_decode(body, (const char *)data, size) > 0) {
        broker_rule_def def;
        sb_status st = SB_OK;
        char err[512];
        if (!mgmt_rule_def_decode(body, &def, &st, err, sizeof err))
            CHECK(!broker_rule_name_check(def.name, strlen(def.name), &st, err, sizeof err));
        broker_rule_def_free(&def);
    }
    pn_data_free(body);

    char *token = malloc(size + 1);
    if (token) {
        memcpy(token, data, size);
        token[size] = 0;
        amqp_sas_result res;
        char why[256];
        (void)amqp_sas_verify(token, "RootManageSharedAccessKey", "SAS_KEY_VALUE", 1700000000000, &res, why,
                              sizeof why);
        free(token);
    }
    return 0;
}
