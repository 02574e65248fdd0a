#include "sweep/messenger.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>

namespace skyfabric::sweep {

std::unique_ptr<Messenger> start_mpi() {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path program = fs::read_symlink("/proc/self/exe", ec);
    const fs::path plugin = (ec ? fs::current_path() : program.parent_path()) / "libskyfabric_mpi.so";
    // RTLD_GLOBAL: Open MPI loads its own components with dlopen, and they expect libmpi's
    // symbols to be visible. The plugin is never unloaded (the messenger's code lives in it).
    void* handle = dlopen(plugin.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle) {
        const char* why = dlerror();
        throw std::runtime_error("cannot load the MPI plugin " + plugin.string() + ": " + (why ? why : "unknown reason") +
                                 " (it is built beside the program when CMake finds MPI)");
    }
    using Start = Messenger* (*)();
    const auto start = reinterpret_cast<Start>(dlsym(handle, "skyfabric_start_mpi"));
    if (!start) throw std::runtime_error("the MPI plugin " + plugin.string() + " has no skyfabric_start_mpi");
    return std::unique_ptr<Messenger>(start());
}

}  // namespace skyfabric::sweep
