/* ISO-8601 / XSD durations as Service Bus writes them (Config.json, the ATOM
 * management API), converted to and from int64 milliseconds.
 *
 * Accepted: [-]P[nY][nM][nW][nD][T[nH][nM]n[.f]S] with at least one component,
 * designators in that order, fractions on seconds only (up to any number of
 * digits; below a millisecond they are truncated). Letters may be lower case.
 * Years and months have no fixed length: like .NET's XmlConvert.ToTimeSpan we
 * count a year as 365 days and a month as 30 days. A week is 7 days.
 *
 * TimeSpan.MaxValue (P10675199DT2H48M5.4775807S) is how Service Bus says
 * "unlimited" (DefaultMessageTimeToLive, AutoDeleteOnIdle). Any duration of at
 * least that many whole milliseconds, and any that overflows, parses to
 * ENT_DURATION_UNLIMITED; formatting ENT_DURATION_UNLIMITED (or anything at or
 * above ENT_DURATION_MAXVALUE_MS) gives back the MaxValue text. */
#ifndef ENT_DURATION_H
#define ENT_DURATION_H

#include <stddef.h>
#include <stdint.h>

#define ENT_DURATION_UNLIMITED INT64_MAX
/* TimeSpan.MaxValue is 9223372036854775807 ticks of 100 ns: this many whole ms. */
#define ENT_DURATION_MAXVALUE_MS INT64_C(922337203685477)
#define ENT_DURATION_MAXVALUE_TEXT "P10675199DT2H48M5.4775807S"

/* .NET ticks (DateTime, TimeSpan) are 100 ns; DateTime's count from 0001-01-01. */
#define ENT_TICKS_PER_MS 10000
#define ENT_TICKS_AT_UNIX_EPOCH INT64_C(621355968000000000)

#define ENT_DURATION_MS_PER_DAY INT64_C(86400000)
#define ENT_DURATION_DAYS_PER_YEAR 365  /* approximation, as XmlConvert */
#define ENT_DURATION_DAYS_PER_MONTH 30  /* approximation, as XmlConvert */

/* Room for any formatted duration, NUL included. */
#define ENT_DURATION_TEXT_MAX 48

/* Parses text into *ms (>= 0, or ENT_DURATION_UNLIMITED). Returns 0, or -1 with
 * a reason in err such as `"PT" has no components (expected e.g. PT1M)` or
 * `negative durations are not allowed`; *ms is left unchanged on error. */
int ent_duration_parse(const char *text, int64_t *ms, char *err, size_t errlen);

/* Writes ms as an ISO-8601 duration ("PT1M", "P14D", "PT0.5S", "P1DT2H",
 * "PT0S"; a negative value gets a leading '-'). Days are the largest unit, as
 * .NET writes TimeSpans. Returns buf. buflen >= ENT_DURATION_TEXT_MAX never
 * truncates. */
char *ent_duration_format(int64_t ms, char *buf, size_t buflen);

#endif
