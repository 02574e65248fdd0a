#pragma once
// Ownership and publication of an output folder (`run -o DIR`, a sweep folder, a sweep point).
//
// - FolderLock: one process at a time owns DIR, by an flock(2) on DIR's lock file beside it
//   (PARENT/.NAME.lock, holding "pid host"). The kernel drops the lock when its holder dies, so a
//   killed run never leaves a stale lock behind (a PID file would need guessing whether the PID is
//   still the same process); the file itself stays, harmlessly.
// - StagedFolder: a run writes every file into a fresh staging folder beside DIR
//   (PARENT/.NAME.staging.PID, created with mkdir, so nothing planted can be inside it) and
//   publish() swaps it with DIR by one renameat2(RENAME_EXCHANGE): a kill at any instant leaves
//   DIR either the previous run or the new one, never a mix. Entries of the previous folder that
//   are not a run's own files (plots/, render/, a sweep point's log.txt, ...) are carried over; the
//   previous run's own files go. Leftovers of killed runs are cleaned by the next lock holder.
#include <filesystem>
#include <string>

namespace skyfabric::output {

// The files a run owns in its folder (and earlier versions' temporaries): never carried over
// from a previous run into a new one.
bool is_run_output(const std::string& entry_name);

// Throws ScenarioError when `folder` cannot be replaced as a whole: the filesystem root, or the current
// directory or one of its ancestors (the shell would be left in the deleted previous run).
void refuse_unreplaceable_folder(const std::filesystem::path& folder);

class FolderLock {
public:
    // Throws ScenarioError (exit 2) naming the holder when another process owns `folder`, or for the
    // filesystem root; OutputError (with the OS reason) when the lock file cannot be opened.
    explicit FolderLock(const std::filesystem::path& folder);
    ~FolderLock();
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

private:
    int fd_ = -1;
};

class StagedFolder {
public:
    // Call with the folder's FolderLock held, after refuse_unreplaceable_folder(folder). Removes
    // leftovers of killed runs, then creates the staging folder.
    explicit StagedFolder(const std::filesystem::path& folder);
    // Not published: the staging folder and everything in it is removed.
    ~StagedFolder();
    StagedFolder(const StagedFolder&) = delete;
    StagedFolder& operator=(const StagedFolder&) = delete;

    const std::filesystem::path& path() const { return staging_; }
    // Makes the staged files DIR in one step. Throws OutputError (with the OS reason) on failure,
    // leaving DIR as it was.
    void publish();

private:
    std::filesystem::path folder_;
    std::filesystem::path staging_;
    bool published_ = false;
};

// Writes `text` to `path` through a temporary beside it (O_EXCL | O_NOFOLLOW: a symlink planted at
// either name is never followed) and renames it into place. Throws OutputError with the OS reason.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace skyfabric::output
