#include "output/file_output.hpp"

#include "output/hdf5_file.hpp"
#include "scenario/yaml_reader.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace skyfabric::output {

namespace fs = std::filesystem;

namespace {

const char* kind_of(mode_t mode) {
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISDIR(mode)) return "a folder";
    return "not a regular file";
}

}  // namespace

bool is_standard_output(const fs::path& path) { return path == "-"; }

std::string random_token() {
    unsigned char bytes[8] = {};
    std::size_t got = 0;
    while (got < sizeof bytes) {
        const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw OutputError(std::string("cannot draw a random name: ") + std::strerror(errno));
        got += static_cast<std::size_t>(n);
    }
    char text[2 * sizeof bytes + 1];
    for (std::size_t i = 0; i < sizeof bytes; ++i) std::snprintf(text + 2 * i, 3, "%02x", bytes[i]);
    return text;
}

void refuse_non_regular_target(const fs::path& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;  // absent, or a file to replace
    throw scenario::ScenarioError(path.string() + " exists and is " + kind_of(st.st_mode) +
                                  "; skyfabric replaces only regular files (give a new file name" +
                                  (S_ISDIR(st.st_mode) ? "" : ", or - for standard output where the option accepts it") + ")");
}

FileReplacement::FileReplacement(fs::path target) : target_(std::move(target)) {
    refuse_non_regular_target(target_);
    const fs::path parent = target_.has_parent_path() ? target_.parent_path() : fs::path(".");
    for (int attempt = 0; fd_ < 0; ++attempt) {
        temporary_ = parent / ("." + target_.filename().string() + "." + std::to_string(static_cast<long>(::getpid())) + "." +
                               random_token() + ".tmp");
        fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd_ < 0 && (errno != EEXIST || attempt >= 8)) {
            throw OutputError("cannot create " + temporary_.string() + " (to write " + target_.string() + "): " + std::strerror(errno));
        }
    }
    struct stat st {};
    ::fstat(fd_, &st);
    device_ = st.st_dev;
    inode_ = st.st_ino;
}

FileReplacement::~FileReplacement() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temporary_.c_str());
}

const fs::path& FileReplacement::temporary_for_named_writer() {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
    ::unlink(temporary_.c_str());
    named_writer_ = true;
    return temporary_;
}

int FileReplacement::release_fd() { return std::exchange(fd_, -1); }

void FileReplacement::write(std::string_view bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw OutputError("cannot write " + target_.string() + ": " + std::strerror(n < 0 ? errno : ENOSPC));
        done += static_cast<std::size_t>(n);
    }
}

void FileReplacement::commit() {
    if (fd_ >= 0 && ::close(std::exchange(fd_, -1)) != 0) {
        throw OutputError("cannot write " + target_.string() + ": " + std::strerror(errno));
    }
    struct stat st {};
    const bool present = ::lstat(temporary_.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    const bool ours = named_writer_ ? st.st_uid == ::geteuid() : st.st_dev == device_ && st.st_ino == inode_;
    if (!present || !ours) {
        throw OutputError("the temporary " + temporary_.string() + " was replaced by another process; " + target_.string() +
                          " is left as it was");
    }
    refuse_non_regular_target(target_);
    if (::rename(temporary_.c_str(), target_.c_str()) != 0) {
        throw OutputError("cannot rename " + temporary_.string() + " to " + target_.string() + ": " + std::strerror(errno));
    }
    committed_ = true;
}

void write_file_atomically(const fs::path& path, const std::string& text) {
    FileReplacement file(path);
    file.write(text);
    file.commit();
}

}  // namespace skyfabric::output
