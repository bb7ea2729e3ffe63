// SPDX-License-Identifier: Apache-2.0
// The kernel settings fragd changed, with the values they had before, kept in
// a file that outlives fragd so that whatever ends it, the values go back:
// at its stop (ActionRunner::stop), at the next start of an act-mode fragd,
// or by `fragd --restore` (the unit's ExecStopPost).
//
// What fragd changes and whether it is put back:
//   /proc/sys/vm/compaction_proactiveness   raised by method proactiveness:
//                                           saved here, put back
//   nr_hugepages of a pool (global or node)  a pool target of the policy or
//                                           `fragctl pool set` is the state the
//                                           operator asked for: kept, not saved;
//                                           a node's pool that compaction method
//                                           pool grows for a moment: saved here,
//                                           put back
//   /proc/sys/vm/defrag_mode               turned off by the defrag_mode guard
//                                           for its hold: saved here, put back
//   nodeN/compact, compact_memory,          triggers, not settings: nothing to put
//   drop_caches                             back
//
// The file (/run/fragd/saved-state) is one setting a line,
// "<file> <value> root=<tree> wrote=<value fragd wrote>", the file by its
// canonical name (/proc/..., /sys/...) whatever --path.procfs and --path.sysfs
// say, so a fragd in a container with the host's /proc elsewhere names the
// same setting, and root= the tree fragd wrote it in (its --path.procfs for a
// /proc file, --path.sysfs for a /sys file, resolved). '#' lines are
// comments. A line without root= and wrote= (fragd before 0.2) stands for the
// default trees (/proc, /sys) and any current value.
//
// A value is put back only into the tree it was saved from (a fragd on a
// scratch tree never writes the host's setting, nor drops the host's line:
// such a line is kept, with a note), and only while the setting still holds
// what fragd wrote (a pool: a count between the saved value and the one
// fragd wrote, which the kernel may not have reached): a value an operator
// set since is left alone, and its line is dropped with a note. It is written
// whole to a new file (O_CREAT|O_EXCL|O_NOFOLLOW, 0600) in the same
// directory, fsynced, renamed over the old one, and the directory fsynced: a
// crash leaves the old file or the new one, never half of one, and no write
// goes through a symlink planted in its place. It is read with O_NOFOLLOW and
// refused when it is a symlink, not a regular file, not owned by fragd's user
// (root) or writable by group or others.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "concerns/act/act_lock.h"
#include "concerns/act/actuator.h"
#include "base/result.h"

namespace fragd {

// Host-wide: not beside the control socket, which each instance chooses.
inline constexpr const char* kRunDir = "/run/fragd";
inline constexpr const char* kSavedStateFile = "/run/fragd/saved-state";
inline constexpr const char* kActLockFile = "/run/fragd/act.lock";
// Where fragd 0.1 kept the one value it saved (beside the default socket): adopted once.
inline constexpr const char* kLegacyStateFile = "/run/fragd/saved-compaction_proactiveness";

inline constexpr const char* kProactivenessFile = "/proc/sys/vm/compaction_proactiveness";
inline constexpr const char* kDefragModeFile = "/proc/sys/vm/defrag_mode";
// The canonical name of a pool's nr_hugepages (node < 0: the global pool).
std::string pool_file(int node, uint64_t size_kib);
// "vm.compaction_proactiveness" for a /proc/sys file, the file itself otherwise.
std::string setting_name(const std::string& file);

struct SavedSetting {
  std::string file;  // canonical name, one of the files above
  uint64_t value = 0;
  std::string root;               // the tree it was saved from; "": the default one (/proc or /sys)
  std::optional<uint64_t> wrote;  // what fragd wrote there; none: not known
};

// The tree `file` (canonical) is under for an actuator whose roots are
// `proc_root` and `sys_root`: the one of the two for its first component,
// resolved (realpath) when it exists, so that two spellings compare equal.
std::string tree_of(const std::string& file, const std::string& proc_root, const std::string& sys_root);

// `dir` must be a directory (not a symlink) owned by `owner` and writable by no
// one else; it is made (0755) when missing.
Result<void> check_state_dir(const std::string& dir, uid_t owner);

// Replaces `path` with `text` as described above (mode 0600).
Result<void> write_file_atomic(const std::string& path, const std::string& text);

// Reads `path` with O_NOFOLLOW: nullopt when it does not exist; an error
// naming the fix when it is a symlink, not a regular file, not owned by
// `owner` or writable by group or others.
Result<std::optional<std::string>> read_private_file(const std::string& path, uid_t owner);

class SavedState {
 public:
  explicit SavedState(std::string path, uid_t owner = geteuid()) : path_(std::move(path)), owner_(owner) {}
  const std::string& path() const { return path_; }

  // Reads the file (none: no entry). A refused file or a malformed line is an
  // error naming the file, the line and the fix; the entries are then empty.
  Result<void> load();
  bool loaded() const { return loaded_; }
  const std::vector<SavedSetting>& entries() const { return entries_; }
  std::optional<uint64_t> find(const std::string& file) const;

  // Records `file`'s value before fragd's first change to it and writes the
  // file before returning: on an error the change must not be made. Loads
  // the file first when not loaded. A file already recorded keeps the value it
  // has (the one before fragd's first change); a different `value` is then an
  // error: the earlier value could not be put back, and fragd must not change
  // the setting again until it is. `root` is the tree fragd writes the file
  // in (tree_of; no whitespace), `wrote` the value it is about to write; a
  // second call for the same file and value with another `wrote` updates it.
  Result<void> remember(const std::string& file, uint64_t value, const std::string& root = "",
                        std::optional<uint64_t> wrote = std::nullopt);
  // `file` has its value back: drops it and rewrites the file (removed when empty).
  Result<void> forget(const std::string& file);

 private:
  Result<void> store() const;
  std::string path_;
  uid_t owner_;
  bool loaded_ = false;
  std::vector<SavedSetting> entries_;
};

// Parses the file's text; errors name `path` and the line.
Result<std::vector<SavedSetting>> parse_saved_state(const std::string& text, const std::string& path);

// Puts each saved value back through the actuator and forgets it; one line
// each for the log ("vm.compaction_proactiveness restored to 20"). A value
// that cannot be written stays saved, and its line says why. Only values
// saved from the actuator's own trees (Actuator::tree_root) are put back;
// the others stay saved (a note each). A setting whose current value is no
// longer what fragd wrote is not written: its entry is dropped (a note).
struct RestoreReport {
  std::vector<std::string> restored, failed, notes;
  bool ok() const { return failed.empty(); }
};
RestoreReport restore_saved(SavedState& s, Actuator& a);

// fragd 0.1's one-value file `legacy`, if any: its value becomes the saved
// proactiveness in `s` and the file goes. Returns a line for the log, if any.
std::optional<std::string> adopt_legacy_state(SavedState& s, const std::string& legacy);

// What a fragd that did not exit cleanly left changed, put back: loads
// `file` (adopting `legacy`) and restores it. For the holder of the act lock
// only. An error: the file was refused (the message says why and the fix).
Result<RestoreReport> restore_left_behind(Actuator& a, const std::string& file = kSavedStateFile,
                                          const std::string& legacy = kLegacyStateFile);

// Becoming the one fragd that changes this host's settings: checks the run
// directory, takes the act lock (`what` names the purpose in a refusal, see
// ActLock::acquire) and puts back what a fragd that did not exit cleanly left
// changed. An act-mode start, a reload into act mode and `fragd --restore`
// all go this way; the caller logs the report.
struct HostClaim {
  std::unique_ptr<ActLock> lock;
  RestoreReport report;
};
Result<HostClaim> claim_host_settings(Actuator& a, const std::string& what);

}  // namespace fragd
