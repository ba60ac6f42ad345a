// SPDX-License-Identifier: Apache-2.0
// A FUSE file system that stalls: its root is a directory owned by the given uid, and every other
// lookup waits until the process is killed, as a home on a hung NFS or FUSE server does. Used by
// the hostile-home test: `gua-stall-fs UID MOUNTPOINT` (foreground; kill it, then unmount).
#define FUSE_USE_VERSION 31
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fuse3/fuse.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

int stall_getattr(const char* path, struct stat* st, struct fuse_file_info* /*fi*/) {
    if (std::strcmp(path, "/") != 0) {
        for (;;) {
            ::pause(); // a lookup below the root never answers
        }
    }
    const auto uid =
        static_cast<uid_t>(reinterpret_cast<std::uintptr_t>(fuse_get_context()->private_data));
    *st = {};
    st->st_mode = S_IFDIR | 0755;
    st->st_nlink = 2;
    st->st_uid = uid;
    st->st_gid = uid;
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        return 2;
    }
    const auto uid = static_cast<std::uintptr_t>(std::strtoul(argv[1], nullptr, 10));
    std::vector<std::string> args{argv[0], "-f", argv[2]};
    std::vector<char*> fuse_argv;
    for (std::string& a : args) {
        fuse_argv.push_back(a.data());
    }
    fuse_operations ops{};
    ops.getattr = stall_getattr;
    return fuse_main(static_cast<int>(fuse_argv.size()), fuse_argv.data(), &ops,
                     reinterpret_cast<void*>(uid));
}
