#pragma once
// The one way the program writes a single file outside a staged output folder (a trace, a season
// CSV, a sweep's tables, summary.json, ...): never by opening an existing path for writing.
//
// A fresh temporary PARENT/.NAME.PID.RANDOM.tmp is created beside the target with
// O_CREAT | O_EXCL | O_NOFOLLOW (nothing planted there is followed or adopted), written, and renamed
// over the target. A target that exists and is not a regular file (a device, a FIFO, a symlink, a
// folder) is refused before anything is written: renaming over it would destroy the node (as root,
// a real device). A reader sees the previous file or the whole new one, never half of one.
#include <filesystem>
#include <string>
#include <string_view>

namespace skyfabric::output {

// "-": standard output, where a command accepts it instead of a file.
bool is_standard_output(const std::filesystem::path& path);

// Throws ScenarioError (exit 2) naming `path` when it exists and is not a regular file.
void refuse_non_regular_target(const std::filesystem::path& path);

class FileReplacement {
public:
    // refuse_non_regular_target(target), then creates the temporary. Throws OutputError (with the
    // OS reason) when it cannot be created.
    explicit FileReplacement(std::filesystem::path target);
    // Not committed: the temporary is removed.
    ~FileReplacement();
    FileReplacement(const FileReplacement&) = delete;
    FileReplacement& operator=(const FileReplacement&) = delete;

    const std::filesystem::path& target() const { return target_; }
    const std::filesystem::path& temporary() const { return temporary_; }
    // The open temporary (O_WRONLY); -1 after release_fd().
    int fd() const { return fd_; }
    // Hands the descriptor to the caller (e.g. for fdopen), who closes it before commit().
    int release_fd();
    // For a library that creates the file by name itself with O_EXCL (HDF5's H5F_ACC_EXCL): the
    // temporary is closed and removed, and its unpredictable name returned for the library to create.
    const std::filesystem::path& temporary_for_named_writer();
    // Writes all of `bytes` at the current offset; throws OutputError with the OS reason.
    void write(std::string_view bytes);
    // Closes the descriptor (if still held), checks that the temporary is still the file created
    // here and the target still not a non-regular file, and renames it into place. Throws
    // OutputError (or ScenarioError for a target that became a device, FIFO, link or folder).
    void commit();

private:
    std::filesystem::path target_;
    std::filesystem::path temporary_;
    int fd_ = -1;
    unsigned long device_ = 0, inode_ = 0;
    bool committed_ = false;
    bool named_writer_ = false;
};

// Writes `text` to `path` through a FileReplacement.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

// A short random hex token (getrandom): names and ownership records nobody can predict.
std::string random_token();

}  // namespace skyfabric::output
