#include "output/output_folder.hpp"

#include "output/hdf5_file.hpp"
#include "scenario/yaml_reader.hpp"

#include <fcntl.h>
#include <linux/fs.h>  // RENAME_EXCHANGE
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

namespace skyfabric::output {

namespace fs = std::filesystem;

namespace {

std::string os_reason() { return std::strerror(errno); }

// The folder as an absolute path without a trailing slash or dot segments.
fs::path normal_folder(const fs::path& folder) {
    fs::path f = fs::absolute(folder).lexically_normal();
    if (f.filename().empty() && f.has_parent_path() && f != f.root_path()) f = f.parent_path();
    return f;
}

// PARENT/.NAME<suffix> for a folder PARENT/NAME.
fs::path beside(const fs::path& folder, const std::string& suffix) {
    const fs::path f = normal_folder(folder);
    return f.parent_path() / ("." + f.filename().string() + suffix);
}

std::string staging_prefix(const fs::path& folder) { return beside(folder, ".staging.").filename().string(); }
std::string replaced_prefix(const fs::path& folder) { return beside(folder, ".replaced.").filename().string(); }

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// Moves every entry of `from` that is not a run's own file and has no namesake in `to` into `to`.
void carry_over(const fs::path& from, const fs::path& to) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(from, ec)) {
        const std::string name = entry.path().filename().string();
        if (is_run_output(name) || fs::symlink_status(to / name, ec).type() != fs::file_type::not_found) continue;
        fs::rename(entry.path(), to / name, ec);  // same file system: the folders are siblings
    }
}

int exchange(const fs::path& a, const fs::path& b) {
    return static_cast<int>(syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE));
}

}  // namespace

bool is_run_output(const std::string& name) {
    static const std::array<const char*, 8> own = {"result.h5", "result.h5.partial", "summary.json", "summary.json.tmp",
                                                   "vtk",       "vtk.partial",       "trace.json",   "trace.json.tmp"};
    for (const char* o : own) {
        if (name == o) return true;
    }
    return false;
}

FolderLock::FolderLock(const fs::path& folder) {
    const fs::path f = normal_folder(folder);
    if (f == f.root_path()) throw scenario::ScenarioError("the filesystem root cannot be an output folder; give a folder of its own");
    const fs::path lock = beside(f, ".lock");
    std::error_code ec;
    if (!lock.parent_path().empty()) fs::create_directories(lock.parent_path(), ec);
    fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0) throw OutputError("cannot open the lock file " + lock.string() + ": " + os_reason());
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        std::string holder(256, '\0');
        const ssize_t n = ::pread(fd_, holder.data(), holder.size() - 1, 0);
        holder.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
        while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
        ::close(fd_);
        fd_ = -1;
        if (err != EWOULDBLOCK) throw OutputError("cannot lock " + lock.string() + ": " + std::strerror(err));
        throw scenario::ScenarioError(folder.string() + " is in use by another skyfabric process" +
                                      (holder.empty() ? "" : " (pid and host: " + holder + ")") +
                                      "; wait for it to finish or choose another -o folder");
    }
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    const std::string me = std::to_string(static_cast<long>(getpid())) + " " + host + "\n";
    if (::ftruncate(fd_, 0) == 0) {
        [[maybe_unused]] const ssize_t written = ::pwrite(fd_, me.data(), me.size(), 0);
    }
}

FolderLock::~FolderLock() {
    if (fd_ >= 0) ::close(fd_);  // closing drops the flock
}

void refuse_unreplaceable_folder(const fs::path& folder) {
    const fs::path f = normal_folder(folder);
    const fs::path cwd = fs::current_path().lexically_normal();
    if (f == f.root_path() || std::mismatch(f.begin(), f.end(), cwd.begin(), cwd.end()).first == f.end()) {
        throw scenario::ScenarioError("output folder " + folder.string() + " is the current directory or contains it; a run " +
                                      "replaces its folder as a whole, so give it one of its own (e.g. -o out/NAME)");
    }
}

StagedFolder::StagedFolder(const fs::path& folder) : folder_(normal_folder(folder)) {
    std::error_code ec;
    const fs::path parent = folder_.parent_path();
    fs::create_directories(parent, ec);
    if (ec) throw OutputError("cannot create output folder " + parent.string() + ": " + ec.message());
    // Leftovers of runs killed before, during or after their swap (only the lock holder makes these):
    // their own files go; anything else (plots/ on its way across) returns to the folder first.
    const std::string staged = staging_prefix(folder_), replaced = replaced_prefix(folder_);
    std::vector<fs::path> leftovers;
    for (const auto& entry : fs::directory_iterator(parent, ec)) {
        const std::string name = entry.path().filename().string();
        if (starts_with(name, replaced) || starts_with(name, staged)) leftovers.push_back(entry.path());
    }
    for (const auto& leftover : leftovers) {
        if (fs::is_directory(folder_, ec)) carry_over(leftover, folder_);
        fs::remove_all(leftover, ec);
    }
    staging_ = beside(folder_, ".staging." + std::to_string(static_cast<long>(getpid())));
    if (::mkdir(staging_.c_str(), 0755) != 0) {
        throw OutputError("cannot create the staging folder " + staging_.string() + ": " + os_reason());
    }
}

StagedFolder::~StagedFolder() {
    if (published_) return;
    std::error_code ec;
    fs::remove_all(staging_, ec);
}

void StagedFolder::publish() {
    const fs::file_type existing = fs::symlink_status(folder_).type();
    if (existing == fs::file_type::not_found) {
        if (::rename(staging_.c_str(), folder_.c_str()) != 0) {
            throw OutputError("cannot move " + staging_.string() + " to " + folder_.string() + ": " + os_reason());
        }
        published_ = true;
        return;
    }
    if (existing != fs::file_type::directory) {
        throw OutputError(folder_.string() + " exists and is not a folder; the run is kept in " + staging_.string());
    }
    carry_over(folder_, staging_);  // plots/, logs, ...: before the swap, so the new folder is whole at once
    if (exchange(staging_, folder_) != 0) {
        throw OutputError("cannot swap " + staging_.string() + " into " + folder_.string() + ": " + os_reason());
    }
    published_ = true;
    // staging_ now holds the previous run: rename it so a kill here is cleaned as a replaced folder.
    const fs::path old = beside(folder_, ".replaced." + std::to_string(static_cast<long>(getpid())));
    std::error_code ec;
    fs::rename(staging_, old, ec);
    fs::remove_all(ec ? staging_ : old, ec);
}

void write_file_atomically(const fs::path& path, const std::string& text) {
    const fs::path temporary = path.string() + ".tmp";
    ::unlink(temporary.c_str());  // an earlier run's leftover, or a planted link: unlink never follows it
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) throw OutputError("cannot create " + temporary.string() + ": " + os_reason());
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const std::string reason = os_reason();
            ::close(fd);
            ::unlink(temporary.c_str());
            throw OutputError("cannot write " + temporary.string() + ": " + reason);
        }
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) {
        const std::string reason = os_reason();
        ::unlink(temporary.c_str());
        throw OutputError("cannot write " + temporary.string() + ": " + reason);
    }
    if (::rename(temporary.c_str(), path.c_str()) != 0) {  // replaces a link at `path`, never its target
        const std::string reason = os_reason();
        ::unlink(temporary.c_str());
        throw OutputError("cannot rename " + temporary.string() + " to " + path.string() + ": " + reason);
    }
}

}  // namespace skyfabric::output
