#include "output/output_folder.hpp"

#include "output/hdf5_file.hpp"
#include "output/summary.hpp"
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
#include <cctype>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

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

// FNV-1a: a stable short digest for names too long to carry whole.
std::string digest(const std::string& text) {
    std::uint64_t h = 1469598103934665603ull;
    for (const unsigned char c : text) h = (h ^ c) * 1099511628211ull;
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
    return out;
}

// PARENT/.NAME<suffix> for a folder PARENT/NAME (NAME shortened with a digest when the whole
// would pass the 255-byte limit on a file name).
fs::path beside(const fs::path& folder, const std::string& suffix) {
    const fs::path f = normal_folder(folder);
    std::string name = f.filename().string();
    constexpr std::size_t longest = 255;
    if (1 + name.size() + suffix.size() > longest) name = name.substr(0, 120) + "~" + digest(name);
    return f.parent_path() / ("." + name + suffix);
}

// The top-level names a previous run in `folder` listed as its own (summary.json "files", e.g. a
// trace given by --trace DIR/NAME): they go with it like is_run_output's names.
std::set<std::string> listed_outputs(const fs::path& folder) {
    std::set<std::string> out;
    const auto j = read_json_file(folder / "summary.json");
    if (!j || !j->is_object() || !j->contains("files") || !(*j)["files"].is_array()) return out;
    for (const auto& f : (*j)["files"]) {
        if (f.is_string()) out.insert(fs::path(f.get<std::string>()).begin()->string());
    }
    return out;
}

// Moves every entry of `from` that is not a run's own file and has no namesake in `to` into `to`;
// returns the names moved, sorted (folders with a trailing '/').
std::vector<std::string> carry_over(const fs::path& from, const fs::path& to) {
    const std::set<std::string> listed = listed_outputs(from);
    std::vector<std::string> moved;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(from, ec)) {
        const std::string name = entry.path().filename().string();
        if (is_run_output(name) || listed.count(name) || fs::symlink_status(to / name, ec).type() != fs::file_type::not_found)
            continue;
        const bool folder = entry.is_directory(ec) && !entry.is_symlink(ec);
        fs::rename(entry.path(), to / name, ec);  // same file system: the folders are siblings
        if (!ec) moved.push_back(name + (folder ? "/" : ""));
    }
    std::sort(moved.begin(), moved.end());
    return moved;
}

int exchange(const fs::path& a, const fs::path& b) {
    return static_cast<int>(syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE));
}

// A staging or replaced folder this program made: a real folder (not a link planted in its
// place) owned by this user.
bool is_own_folder(const fs::path& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid();
}

bool is_mount_point(const fs::path& folder) {
    struct statx sx {};
    if (::statx(AT_FDCWD, folder.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) == 0 &&
        (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0)
        return (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
    struct stat here {}, above {};  // older kernels: another device than its parent's
    return ::lstat(folder.c_str(), &here) == 0 && ::stat(folder.parent_path().c_str(), &above) == 0 &&
           here.st_dev != above.st_dev;
}

// "pid host token" of a lock holder (token: names its staging and replaced folders).
struct Owner {
    std::string pid, token;
};

Owner parse_owner(const std::string& record) {
    std::istringstream in(record);
    Owner o;
    std::string host;
    in >> o.pid >> host >> o.token;
    const auto digits = [](const std::string& s) {
        return !s.empty() && s.size() <= 20 && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
    };
    if (!digits(o.pid) || !digits(o.token)) return {};
    return o;
}

fs::path staging_name(const fs::path& folder, const Owner& o) { return beside(folder, ".staging." + o.pid + "." + o.token); }
fs::path replaced_name(const fs::path& folder, const Owner& o) { return beside(folder, ".replaced." + o.pid + "." + o.token); }

// Leftovers of the previous lock holder (it has ended: its flock is gone), found by the names its
// record gives, never by a prefix another folder's entries could share: anything else of the
// previous folder (plots/ on its way across) returns to the folder first; then they go.
void remove_leftovers(const fs::path& folder, const Owner& previous) {
    if (previous.token.empty()) return;
    std::error_code ec;
    for (const fs::path& leftover : {replaced_name(folder, previous), staging_name(folder, previous)}) {
        if (!is_own_folder(leftover)) continue;
        if (is_own_folder(folder)) carry_over(leftover, folder);
        fs::remove_all(leftover, ec);  // does not follow links inside
    }
}

std::string read_record(int fd) {
    std::string text(256, '\0');
    const ssize_t n = ::pread(fd, text.data(), text.size() - 1, 0);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
    return text;
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
    // Created afresh, or an existing lock file that is a plain file with no other name: the holder
    // writes its record into it, which must never truncate a file planted there as a hard link.
    fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0 && errno == EEXIST) fd_ = ::open(lock.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0 && errno == ELOOP) {
        throw scenario::ScenarioError("the lock file " + lock.string() + " is a symbolic link, which skyfabric never follows; remove it");
    }
    if (fd_ < 0) throw OutputError("cannot open the lock file " + lock.string() + ": " + os_reason());
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        ::close(fd_);
        fd_ = -1;
        throw scenario::ScenarioError("the lock file " + lock.string() + " is not a plain file of its own (" +
                                      (S_ISREG(st.st_mode) ? "a hard link to another name" : "not a regular file") +
                                      "); skyfabric does not write into it: remove it");
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        const std::string holder = read_record(fd_);
        ::close(fd_);
        fd_ = -1;
        if (err != EWOULDBLOCK) throw OutputError("cannot lock " + lock.string() + ": " + std::strerror(err));
        throw scenario::ScenarioError(folder.string() + " is in use by another skyfabric process" +
                                      (holder.empty() ? "" : " (pid and host: " + holder.substr(0, holder.rfind(' ')) + ")") +
                                      "; wait for it to finish or choose another -o folder");
    }
    remove_leftovers(f, parse_owner(read_record(fd_)));
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    for (char& c : host) c = (c == ' ' || c == '\n') ? '_' : c;
    pid_ = std::to_string(static_cast<long>(getpid()));
    token_ = random_token();
    const std::string me = pid_ + " " + host + " " + token_ + "\n";
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
        const std::string reason = os_reason();
        ::close(fd_);
        fd_ = -1;
        throw OutputError("cannot write the lock file " + lock.string() + ": " + reason);
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
    struct stat st {};
    if (::lstat(f.c_str(), &st) != 0) return;  // created by the run
    if (S_ISLNK(st.st_mode)) {
        std::error_code ec;
        throw scenario::ScenarioError("output folder " + folder.string() + " is a symbolic link (to " +
                                      fs::read_symlink(f, ec).string() + "); a run replaces its folder as a whole, which " +
                                      "would replace the link, not the folder: give the folder itself");
    }
    if (!S_ISDIR(st.st_mode)) {
        throw scenario::ScenarioError("output folder " + folder.string() + " exists and is not a folder; give another -o");
    }
    if (is_mount_point(f)) {
        throw scenario::ScenarioError("output folder " + folder.string() + " is a mount point, which cannot be replaced as a " +
                                      "whole: give a folder inside it");
    }
    if (::access(f.c_str(), W_OK | X_OK) != 0) {
        throw scenario::ScenarioError("output folder " + folder.string() + " cannot be written by you (" + os_reason() +
                                      "); a run would replace it with its files: give another -o or change its permissions");
    }
}

StagedFolder::StagedFolder(const fs::path& folder, const FolderLock& lock) : folder_(normal_folder(folder)) {
    std::error_code ec;
    const fs::path parent = folder_.parent_path();
    fs::create_directories(parent, ec);
    if (ec) throw OutputError("cannot create output folder " + parent.string() + ": " + ec.message());
    // A name nobody can predict, made with mkdir: nothing planted is adopted or followed.
    staging_ = staging_name(folder_, {lock.pid(), lock.token()});
    if (::mkdir(staging_.c_str(), 0777) != 0) {
        throw OutputError("cannot create the staging folder " + staging_.string() + ": " + os_reason());
    }
    replaced_ = replaced_name(folder_, {lock.pid(), lock.token()});
}

StagedFolder::~StagedFolder() {
    if (published_ || kept_) return;
    std::error_code ec;
    fs::remove_all(staging_, ec);
}

std::vector<std::string> StagedFolder::publish() {
    // A publication that fails keeps the staged run where it is, and says so.
    const auto fail = [this](const std::string& what) {
        kept_ = true;
        throw OutputError(what + "; the run is kept in " + staging_.string());
    };
    struct stat st {};
    if (::lstat(folder_.c_str(), &st) != 0) {
        if (errno != ENOENT) fail("cannot inspect " + folder_.string() + ": " + os_reason());
        if (::rename(staging_.c_str(), folder_.c_str()) != 0) {
            fail("cannot move " + staging_.string() + " to " + folder_.string() + ": " + os_reason());
        }
        published_ = true;
        return {};
    }
    if (!S_ISDIR(st.st_mode)) fail(folder_.string() + " has become something other than a folder");
    // plots/, logs, ...: before the swap, so the new folder is whole at once.
    std::vector<std::string> carried = carry_over(folder_, staging_);
    // The folder keeps its mode (and, for root, its owner and group).
    ::chmod(staging_.c_str(), st.st_mode & 07777);
    if (::geteuid() == 0) [[maybe_unused]] const int ignored = ::lchown(staging_.c_str(), st.st_uid, st.st_gid);
    if (exchange(staging_, folder_) != 0) {
        fail("cannot swap " + staging_.string() + " into " + folder_.string() + ": " + os_reason());
    }
    published_ = true;
    // staging_ now holds the previous run: renamed so a kill here is cleaned as a replaced folder.
    std::error_code ec;
    fs::rename(staging_, replaced_, ec);
    fs::remove_all(ec ? staging_ : replaced_, ec);
    return carried;
}

}  // namespace skyfabric::output
