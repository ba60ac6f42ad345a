// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: the gpu-usage-audit importer's reader (src/store/prior_art.cpp) on arbitrary
// files handed to `gua import`: the input is the file's bytes (fuzz/corpus/prior_art/ holds small
// real files of each prior-art schema version).
#include "core/fatal.hpp"
#include "store/prior_art.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

/// A scratch file of this process; its -wal/-shm/-journal are removed around every input so that
/// one input never leaks into the next.
const std::string& scratch() {
    static const std::string path = [] {
        std::string dir = (::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
        dir += "/gua-fuzz-prior-XXXXXX";
        if (::mkdtemp(dir.data()) == nullptr) {
            std::abort();
        }
        return dir + "/old.db";
    }();
    return path;
}

void remove_all(const std::string& path) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
        std::remove((path + suffix).c_str());
    }
}

void read_everything(const std::string& path) {
    gua::store::PriorArtFile file(path);
    volatile std::size_t sink = file.schema().version().size();
    sink = sink + file.host().first.size() + file.runs().size() + file.devices().size() +
           file.sample_count() + file.inferred_intervals().size();
    std::vector<std::string> uuids = file.gpu_uuids();
    if (uuids.size() > 4) {
        uuids.resize(4);
    }
    for (const std::string& uuid : uuids) {
        gua::store::PriorArtFile::Cursor cursor = file.cursor(uuid);
        gua::store::PriorSample sample;
        std::vector<gua::store::PriorProcess> processes;
        for (int i = 0; i < 1000 && cursor.next(sample, processes); ++i) {
            sink = sink + processes.size();
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string& path = scratch();
    remove_all(path);
    if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
        std::fwrite(data, 1, size, f);
        std::fclose(f);
    }
    try {
        read_everything(path);
    } catch (const gua::Fatal&) {
        // a one-line error naming the file: what `gua import` prints
    }
    remove_all(path);
    return 0;
}
