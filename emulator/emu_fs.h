/* Small file-system helpers the emulator's start-up shares (the embedded
 * PostgreSQL's directories, the generated TLS certificate's). */
#ifndef EMU_FS_H
#define EMU_FS_H

#include <sys/types.h>

/* The longest path emu_mkdir_p takes (Linux's PATH_MAX). */
#define EMU_FS_PATH_MAX 4096

/* mkdir -p: every missing parent 0755, path itself with mode. 0, or -1 with
 * errno (ENAMETOOLONG past EMU_FS_PATH_MAX). An existing directory is fine. */
int emu_mkdir_p(const char *path, mode_t mode);

#endif
