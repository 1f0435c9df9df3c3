/* The dashboard's files as the binary carries them (a table generated from
 * amqp10/http/dashboard/ by its embed.cmake); served by http_dash_assets.c. */
#ifndef HTTP_DASH_ASSETS_H
#define HTTP_DASH_ASSETS_H

#include <stddef.h>

typedef struct http_dash_file {
    const char *name; /* the file's name: "index.html", "app.js" */
    const unsigned char *bytes;
    size_t len;
} http_dash_file;

/* Ends with a row whose name is NULL. */
extern const http_dash_file http_dash_files[];

#endif
