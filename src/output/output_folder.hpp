#pragma once
// Ownership and publication of an output folder (`run -o DIR`, a sweep folder, a sweep point).
//
// - FolderLock: one process at a time owns DIR, by an flock(2) on DIR's lock file beside it
//   (PARENT/.NAME.lock, holding "pid host token"; created with O_EXCL, or an existing plain file
//   with no other name: a planted link or hard link is refused, never written through). The
//   kernel drops the lock when its holder dies, so a killed run never leaves a stale lock behind;
//   the file itself stays, harmlessly. A new holder first removes the leftovers of the previous one
//   (it has ended), found by the exact names its record gives, never by a prefix.
// - StagedFolder: a run writes every file into a fresh staging folder beside DIR
//   (PARENT/.NAME.staging.PID.TOKEN, created with mkdir under a random token, so nothing planted can
//   be adopted) and publish() swaps it with DIR by one renameat2(RENAME_EXCHANGE): a kill at any
//   instant leaves DIR either the previous run or the new one, never a mix. Entries of the previous
//   folder that are not a run's own files (plots/, render/, a sweep point's log.txt, ...) are
//   carried over; the previous run's own files (is_run_output, and those its summary.json lists)
//   go; publish() returns what it carried, and the run names it on stderr. The folder keeps its mode.
#include "output/file_output.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace skyfabric::output {

// The files a run owns in its folder (and earlier versions' temporaries): never carried over
// from a previous run into a new one.
bool is_run_output(const std::string& entry_name);

// Throws ScenarioError (exit 2, before any work) when `folder` cannot be replaced as a whole: the
// filesystem root, the current directory or one of its ancestors (the shell would be left in the
// deleted previous run), a symbolic link (the link would be replaced, not its folder), something
// other than a folder, a mount point, or a folder the user cannot write.
void refuse_unreplaceable_folder(const std::filesystem::path& folder);

class FolderLock {
public:
    // Throws ScenarioError (exit 2) naming the holder when another process owns `folder`, or for the
    // filesystem root; OutputError (with the OS reason) when the lock file cannot be opened.
    explicit FolderLock(const std::filesystem::path& folder);
    ~FolderLock();
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

    // This holder's pid and random token (they name its staging and replaced folders).
    const std::string& pid() const { return pid_; }
    const std::string& token() const { return token_; }

private:
    int fd_ = -1;
    std::string pid_, token_;
};

class StagedFolder {
public:
    // Call with the folder's FolderLock held, after refuse_unreplaceable_folder(folder). Creates the
    // staging folder PARENT/.NAME.staging.PID.TOKEN (the lock's pid and token).
    StagedFolder(const std::filesystem::path& folder, const FolderLock& lock);
    // Not published (and not kept by a failed publish): the staging folder and everything in it is removed.
    ~StagedFolder();
    StagedFolder(const StagedFolder&) = delete;
    StagedFolder& operator=(const StagedFolder&) = delete;

    const std::filesystem::path& path() const { return staging_; }
    // Makes the staged files DIR in one step, with DIR's mode (and for root its owner). Throws
    // OutputError (with the OS reason) on failure, leaving DIR as it was and the run kept in the
    // staging folder, which the message names. Returns what it carried over from the previous
    // folder (names, folders with a trailing '/'), for the caller to say so: they were not made by
    // this run, and plots or renders among them show the previous run's results.
    std::vector<std::string> publish();

private:
    std::filesystem::path folder_;
    std::filesystem::path staging_;
    std::filesystem::path replaced_;
    bool published_ = false;
    bool kept_ = false;
};

}  // namespace skyfabric::output
