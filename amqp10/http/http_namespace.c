/* GET /$namespaceinfo: the request's namespace's properties (.NET and Python
 * read a <NamespaceInfo>, JS the first element of the content, whatever its
 * name). Every namespace is Standard; the default one was made when its
 * database was, and is called sbemulatorns here as before namespaces. */
#include <stdlib.h>

#include "http_describe.h"
#include "http_internal.h"

typedef struct ns_times {
    int64_t created_ms, modified_ms;
} ns_times;

static void namespace_entry(http_xml_buf *b, const http_req *r, const char *base, const void *row, bool top_level)
{
    const ns_times *t = row;
    const char *name = r->ns_name[0] ? r->ns_name : HTTP_DESCRIBE_NAMESPACE;
    store_admin_runtime rt = {.created_ms = t->created_ms, .updated_ms = t->modified_ms};
    http_describe_entry_begin(b, base, "$namespaceinfo", name, &rt, top_level);
    /* elements in alphabetical order, as the service's contract writes them */
    http_xml_raw(b, "<NamespaceInfo xmlns=\"" HTTP_XML_NS_SB "\" xmlns:i=\"" HTTP_XML_NS_XSI "\">");
    http_xml_leaf_time(b, "CreatedTime", t->created_ms);
    http_xml_leaf(b, "MessagingSKU", "Standard");
    http_xml_leaf_time(b, "ModifiedTime", t->modified_ms);
    http_xml_leaf(b, "Name", name);
    http_xml_leaf(b, "NamespaceType", "Messaging");
    http_xml_raw(b, "</NamespaceInfo>");
    http_xml_entry_end(b);
}

static void on_namespace(void *ctx, sb_status st, int64_t created_ms, int64_t modified_ms)
{
    http_req *r = ctx;
    if (http_req_gone(r))
        return;
    if (st != SB_OK) {
        http_respond_store_error(r, st, "$namespaceinfo");
        return;
    }
    ns_times t = {created_ms, modified_ms};
    size_t len = 0;
    char *body = http_entry_body(r, &t, namespace_entry, &len);
    http_respond_xml(r, SB_OK, false, body, len);
}

void http_namespace_get(http_req *r) { store_admin_namespace(broker_store(r->broker), r->ns, on_namespace, r); }
