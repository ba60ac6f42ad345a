// SPDX-License-Identifier: Apache-2.0
// Test-only LD_PRELOAD library: fcntl(F_OFD_SETLK/F_OFD_SETLKW) succeeds without locking, so a
// test can force a second gua daemon onto a database another daemon records (the overlap test of
// two writers). Every other fcntl command goes to the C library.
#include <cstdarg>
#include <dlfcn.h>
#include <fcntl.h>

namespace {

using Fcntl = int (*)(int, int, ...);

int forward(const char* name, int fd, int cmd, void* arg) {
    if (cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW) {
        return 0; // the lock is "taken": nothing is locked
    }
    const auto real = reinterpret_cast<Fcntl>(dlsym(RTLD_NEXT, name));
    return real(fd, cmd, arg);
}

} // namespace

extern "C" int fcntl(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    void* arg = va_arg(ap, void*);
    va_end(ap);
    return forward("fcntl", fd, cmd, arg);
}

extern "C" int fcntl64(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    void* arg = va_arg(ap, void*);
    va_end(ap);
    return forward("fcntl64", fd, cmd, arg);
}
