/* Prepared statements of the $management operations (peek, receive by
 * sequence number, schedule, cancel, batch delete, ...). Empty until those
 * operations land; store_open prepares whatever this file lists. */
#include "store_statements.h"

int store_mgmt_statements_prepare(PGconn *conn, char *err, size_t errlen)
{
    (void)conn;
    (void)err;
    (void)errlen;
    return 0;
}
