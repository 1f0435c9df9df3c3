/* `sbemu filter`: try a Service Bus SQL filter (and optionally a rule action)
 * against one message read as JSON on stdin.
 *
 *   sbemu filter [--action ACTION] [--param NAME=JSONVALUE ...] EXPRESSION
 *
 * stdin: {"system": {"MessageId": "m1", "Label": "x", ...},
 *         "properties": {"color": "red", "qty": 5, ...}}
 * (JSON integers are int64, numbers with a fraction or exponent are doubles;
 * timestamps are ISO 8601 strings or integer milliseconds since the epoch;
 * TimeToLive is integer milliseconds.)
 *
 * stdout: "match" or "no match"; with --action and a match, a second line
 * holds the message after the action, in the same shape (compact JSON,
 * system properties in a fixed order, user properties in insertion order).
 * The action only runs when the filter matches, as in a subscription.
 * Exit 0 either way; 1 on a syntax or evaluation error (reason and position
 * on stderr); 2 on bad usage or a malformed message. */
#ifndef CMD_FILTER_H
#define CMD_FILTER_H

#include <stdio.h>

/* argv[0] is "filter". */
int emu_cmd_filter(int argc, char **argv);

/* The same with explicit streams, so tests can run it in-process. */
int emu_cmd_filter_io(int argc, char **argv, FILE *in, FILE *out, FILE *err);

#endif
