/* See emu_fs.h. */
#include "emu_fs.h"

#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

int emu_mkdir_p(const char *path, mode_t mode)
{
    char tmp[EMU_FS_PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, mode) < 0 && errno != EEXIST)
        return -1;
    return 0;
}
