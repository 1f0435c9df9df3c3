/* When a receive is stamped as activity (ent_activity.h). */
#include "ent_activity.h"

bool ent_activity_stamp_due(int64_t last_ms, int64_t now_ms)
{
    return last_ms == 0 || now_ms < last_ms || now_ms - last_ms >= ENT_ACTIVITY_STAMP_MS;
}
