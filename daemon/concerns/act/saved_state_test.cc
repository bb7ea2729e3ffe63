// SPDX-License-Identifier: Apache-2.0
// The saved kernel settings (concerns/act/saved_state.h) and the act lock
// (concerns/act/act_lock.h) on a scratch directory: the file's format and checks, the
// list restored through the actuator, and the lock refusing a second holder.
#include "concerns/act/saved_state.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "concerns/act/act_lock.h"
#include "concerns/act/sysfs_actuator.h"
#include "fake_actuator.h"

namespace {

namespace fs = std::filesystem;
using fragd::SavedState;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void put(const fs::path& p, const std::string& text, mode_t mode = 0600) {
  std::ofstream(p, std::ios::trunc) << text;
  chmod(p.c_str(), mode);
}

class SavedStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fragd-saved-state.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    chmod(dir_.c_str(), 0755);
    file_ = dir_ / "saved-state";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_, file_;
};

const std::string kPool = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
const std::string kNodePool = "/sys/devices/system/node/node1/hugepages/hugepages-1048576kB/nr_hugepages";

TEST_F(SavedStateTest, EveryEntryOfTheListIsRestoredThenTheFileGoes) {
  SavedState s(file_);
  ASSERT_TRUE(s.remember(fragd::kProactivenessFile, 20));
  ASSERT_TRUE(s.remember(kPool, 0));
  ASSERT_TRUE(s.remember(kNodePool, 3));
  EXPECT_EQ(fragd::pool_file(-1, 2048), kPool);
  EXPECT_EQ(fragd::pool_file(1, 1048576), kNodePool);

  // A new reader (the next start, or fragd --restore) sees the three.
  SavedState again(file_);
  ASSERT_TRUE(again.load());
  ASSERT_EQ(again.entries().size(), 3u);

  fragd::test::FakeActuator a;
  a.set_node(0, 51200, 50, 10);
  a.set_node(1, 51200, 50, 10);
  a.proactiveness = 90;
  const auto rep = fragd::restore_saved(again, a);
  EXPECT_TRUE(rep.ok());
  ASSERT_EQ(rep.restored.size(), 3u);
  EXPECT_EQ(rep.restored[0], "vm.compaction_proactiveness restored to 20");
  EXPECT_EQ(a.proactiveness, 20u);
  EXPECT_NE(std::find(a.calls.begin(), a.calls.end(), "write_pool -1 2048 0"), a.calls.end());
  EXPECT_NE(std::find(a.calls.begin(), a.calls.end(), "write_pool 1 1048576 3"), a.calls.end());
  EXPECT_FALSE(fs::exists(file_));
  EXPECT_TRUE(again.entries().empty());
}

// A scratch tree of procfs and sysfs with the files restore_saved reads and writes.
struct Tree {
  fs::path root;
  explicit Tree(const fs::path& r) : root(r) {
    fs::create_directories(root / "proc/sys/vm");
    fs::create_directories(root / "sys/kernel/mm/hugepages/hugepages-2048kB");
  }
  std::string proc() const { return (root / "proc").string(); }
  std::string sys() const { return (root / "sys").string(); }
  fs::path pro() const { return root / "proc/sys/vm/compaction_proactiveness"; }
  fs::path pool() const { return root / "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"; }
  std::string read(const fs::path& p) const {
    std::string t = slurp(p);
    while (!t.empty() && t.back() == '\n') t.pop_back();
    return t;
  }
};

TEST_F(SavedStateTest, AValueIsRestoredOnlyIntoTheTreeItWasSavedFrom) {
  Tree host(dir_ / "host"), scratch(dir_ / "scratch");
  put(host.pro(), "90\n", 0644);
  put(scratch.pro(), "90\n", 0644);
  fragd::SysfsActuator at_host(host.proc(), host.sys()), at_scratch(scratch.proc(), scratch.sys());
  SavedState s(file_);
  ASSERT_TRUE(s.remember(fragd::kProactivenessFile, 20, at_host.tree_root(fragd::kProactivenessFile), 90));
  EXPECT_NE(slurp(file_).find(fragd::kProactivenessFile + std::string(" 20 root=") +
                              fs::canonical(host.root / "proc").string() + " wrote=90\n"),
            std::string::npos)
      << slurp(file_);

  // fragd --restore on another tree: nothing written there or on the host, the record stays.
  SavedState other(file_);
  ASSERT_TRUE(other.load());
  auto rep = fragd::restore_saved(other, at_scratch);
  EXPECT_TRUE(rep.ok());
  EXPECT_TRUE(rep.restored.empty());
  ASSERT_EQ(rep.notes.size(), 1u);
  EXPECT_NE(rep.notes[0].find("saved from " + fs::canonical(host.root / "proc").string()), std::string::npos)
      << rep.notes[0];
  EXPECT_EQ(scratch.read(scratch.pro()), "90");
  EXPECT_EQ(host.read(host.pro()), "90");
  ASSERT_TRUE(fs::exists(file_)) << "the host's record was deleted by a restore on another tree";
  EXPECT_EQ(other.entries().size(), 1u);

  // The same tree, spelt another way, is the tree.
  fragd::SysfsActuator again_host((host.root / "." / "proc").string(), (host.root / "sys/").string());
  rep = fragd::restore_saved(other, again_host);
  EXPECT_TRUE(rep.ok());
  ASSERT_EQ(rep.restored.size(), 1u) << (rep.notes.empty() ? "" : rep.notes[0]);
  EXPECT_EQ(host.read(host.pro()), "20");
  EXPECT_FALSE(fs::exists(file_));
}

TEST_F(SavedStateTest, AValueAnOperatorSetSinceIsLeftAndItsEntryDropped) {
  Tree host(dir_ / "host");
  put(host.pro(), "90\n", 0644);
  put(host.pool(), "9\n", 0644);
  fragd::SysfsActuator a(host.proc(), host.sys());
  SavedState s(file_);
  ASSERT_TRUE(s.remember(fragd::kProactivenessFile, 20, a.tree_root(fragd::kProactivenessFile), 90));
  ASSERT_TRUE(s.remember(kPool, 2, a.tree_root(kPool), 9));
  put(host.pro(), "55\n", 0644);  // an operator's value, set after fragd's
  auto rep = fragd::restore_saved(s, a);
  EXPECT_TRUE(rep.ok());
  EXPECT_EQ(host.read(host.pro()), "55") << "the operator's value was overwritten";
  ASSERT_EQ(rep.notes.size(), 1u);
  EXPECT_NE(rep.notes[0].find("reads 55, not the 90 fragd wrote"), std::string::npos) << rep.notes[0];
  // The pool reads 9, what fragd wrote: put back.
  ASSERT_EQ(rep.restored.size(), 1u);
  EXPECT_EQ(host.read(host.pool()), "2");
  EXPECT_FALSE(fs::exists(file_)) << "both entries are done with";
}

TEST_F(SavedStateTest, APoolBetweenTheSavedCountAndTheWrittenOneIsFragds) {
  Tree host(dir_ / "host");
  fragd::SysfsActuator a(host.proc(), host.sys());
  for (const auto& [now, restored] : std::vector<std::pair<std::string, bool>>{
           {"6", true}, {"2", true}, {"9", true}, {"1", false}, {"12", false}}) {
    put(host.pool(), now + "\n", 0644);
    SavedState s(file_);
    ASSERT_TRUE(s.remember(kPool, 2, a.tree_root(kPool), 10));
    const auto rep = fragd::restore_saved(s, a);
    EXPECT_EQ(rep.restored.size(), restored ? 1u : 0u) << "pool at " << now;
    EXPECT_EQ(host.read(host.pool()), restored ? "2" : now) << "pool at " << now;
    EXPECT_FALSE(fs::exists(file_)) << "pool at " << now;
  }
}

TEST_F(SavedStateTest, TheWrittenValueFollowsARaiseToAnotherValue) {
  SavedState s(file_);
  ASSERT_TRUE(s.remember(fragd::kProactivenessFile, 20, "/proc", 90));
  ASSERT_TRUE(s.remember(fragd::kProactivenessFile, 20, "/proc", 70));
  SavedState r(file_);
  ASSERT_TRUE(r.load());
  ASSERT_EQ(r.entries().size(), 1u);
  EXPECT_EQ(r.entries()[0].wrote, std::optional<uint64_t>(70));
  EXPECT_EQ(r.entries()[0].root, "/proc");
  EXPECT_FALSE(s.remember(fragd::kProactivenessFile, 20, "/tmp/a b", 70)) << "a tree the file cannot hold";
  auto other = s.remember(fragd::kProactivenessFile, 20, "/scratch/proc", 90);
  ASSERT_FALSE(other) << "a value saved from another tree taken for this one's";
  EXPECT_NE(other.error().message.find("from /proc"), std::string::npos) << other.error().message;
}

TEST_F(SavedStateTest, ALineOfAnEarlierFragdStandsForTheDefaultTrees) {
  auto e = fragd::parse_saved_state("/proc/sys/vm/compaction_proactiveness 20\n", "f");
  ASSERT_TRUE(e) << e.error().message;
  ASSERT_EQ(e->size(), 1u);
  EXPECT_EQ((*e)[0].root, "");
  EXPECT_FALSE((*e)[0].wrote);
  auto bad = fragd::parse_saved_state("/proc/sys/vm/compaction_proactiveness 20 wrote=x\n", "f");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("f:1: "), std::string::npos) << bad.error().message;
  // Restored through an actuator on the default trees, not through one on a scratch tree.
  Tree scratch(dir_ / "scratch");
  put(scratch.pro(), "90\n", 0644);
  put(file_, "/proc/sys/vm/compaction_proactiveness 20\n");
  SavedState s(file_);
  ASSERT_TRUE(s.load());
  fragd::SysfsActuator a(scratch.proc(), scratch.sys());
  const auto rep = fragd::restore_saved(s, a);
  EXPECT_TRUE(rep.restored.empty());
  EXPECT_EQ(scratch.read(scratch.pro()), "90");
  EXPECT_TRUE(fs::exists(file_));
}

TEST_F(SavedStateTest, AValueThatCannotBeWrittenStaysSaved) {
  SavedState s(file_);
  ASSERT_TRUE(s.remember(fragd::kProactivenessFile, 20));
  ASSERT_TRUE(s.remember(kPool, 0));
  fragd::test::FakeActuator a;
  a.fail("write_proactiveness", EROFS);
  const auto rep = fragd::restore_saved(s, a);
  ASSERT_EQ(rep.failed.size(), 1u);
  EXPECT_NE(rep.failed[0].find("could not restore vm.compaction_proactiveness 20"), std::string::npos) << rep.failed[0];
  EXPECT_EQ(rep.restored.size(), 1u);
  SavedState left(file_);
  ASSERT_TRUE(left.load());
  ASSERT_EQ(left.entries().size(), 1u);
  EXPECT_EQ(left.entries()[0].file, fragd::kProactivenessFile);
  // Not changed again until it is back: a raise now would save the raised value as the old one.
  auto r = left.remember(fragd::kProactivenessFile, 90);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("fragd --restore"), std::string::npos) << r.error().message;
  EXPECT_TRUE(left.remember(fragd::kProactivenessFile, 20)) << "the same value is no conflict";
}

TEST_F(SavedStateTest, FirstValueWinsAndForgetRewrites) {
  SavedState s(file_);
  ASSERT_TRUE(s.remember(kPool, 4));
  ASSERT_TRUE(s.remember(fragd::kProactivenessFile, 20));
  ASSERT_TRUE(s.forget(kPool));
  const std::string text = slurp(file_);
  EXPECT_EQ(text.find(kPool), std::string::npos) << text;
  EXPECT_NE(text.find("/proc/sys/vm/compaction_proactiveness 20\n"), std::string::npos) << text;
  EXPECT_EQ(text[0], '#') << "the file says what it is";
  struct stat st;
  ASSERT_EQ(stat(file_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(SavedStateTest, SymlinkIsRefusedOnReadAndNeverWrittenThrough) {
  const fs::path victim = dir_ / "passwd";
  put(victim, "root:x:0:0::/root:/bin/sh\n");
  fs::create_symlink(victim, file_);
  SavedState s(file_);
  auto r = s.load();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("is a symbolic link"), std::string::npos) << r.error().message;
  EXPECT_FALSE(s.remember(fragd::kProactivenessFile, 20)) << "remember loads first, and refuses the same";
  EXPECT_EQ(slurp(victim), "root:x:0:0::/root:/bin/sh\n");
  EXPECT_TRUE(fs::is_symlink(file_));
}

TEST_F(SavedStateTest, AtomicWriteReplacesASymlinkInsteadOfFollowingIt) {
  const fs::path victim = dir_ / "passwd";
  put(victim, "root:x:0:0::/root:/bin/sh\n");
  fs::create_symlink(victim, file_);
  ASSERT_TRUE(fragd::write_file_atomic(file_, "x 1\n"));
  EXPECT_FALSE(fs::is_symlink(file_));
  EXPECT_EQ(slurp(file_), "x 1\n");
  EXPECT_EQ(slurp(victim), "root:x:0:0::/root:/bin/sh\n");
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir_)) n += e.path().filename().string().find(".new.") != std::string::npos;
  EXPECT_EQ(n, 0u) << "a temporary file was left";
}

TEST_F(SavedStateTest, UnsafeFilesAreRefusedWithTheReason) {
  put(file_, "", 0620);
  auto r = SavedState(file_).load();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("writable by group or others"), std::string::npos) << r.error().message;
  put(file_, "", 0600);
  r = SavedState(file_, geteuid() + 1).load();  // owned by someone else than fragd's user
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("is owned by uid"), std::string::npos) << r.error().message;
  fs::remove(file_);
  fs::create_directory(file_);
  r = SavedState(file_).load();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not a regular file"), std::string::npos) << r.error().message;
  EXPECT_TRUE(SavedState(dir_ / "absent").load()) << "no file: nothing saved";
}

TEST_F(SavedStateTest, MalformedLinesNameTheLine) {
  const std::string p = "/run/fragd/saved-state";
  EXPECT_TRUE(fragd::parse_saved_state("# comment\n\n/proc/sys/vm/compaction_proactiveness 20\n", p));
  auto r = fragd::parse_saved_state("# c\n/proc/sys/vm/compaction_proactiveness\n", p);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find(p + ":2:"), std::string::npos) << r.error().message;
  r = fragd::parse_saved_state("/etc/passwd 0\n", p);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not a setting fragd changes"), std::string::npos) << r.error().message;
  EXPECT_FALSE(fragd::parse_saved_state("/sys/kernel/mm/hugepages/hugepages-2048kB/../../../x 0\n", p));
  EXPECT_FALSE(fragd::parse_saved_state("/proc/sys/vm/compaction_proactiveness 101\n", p));
  EXPECT_FALSE(fragd::parse_saved_state("/proc/sys/vm/compaction_proactiveness 1\n/proc/sys/vm/compaction_proactiveness 2\n", p));
}

TEST_F(SavedStateTest, LegacyFileIsAdopted) {
  const fs::path legacy = dir_ / "saved-compaction_proactiveness";
  put(legacy, "7\n");
  SavedState s(file_);
  auto msg = fragd::adopt_legacy_state(s, legacy);
  ASSERT_TRUE(msg);
  EXPECT_EQ(s.find(fragd::kProactivenessFile), 7u) << *msg;
  EXPECT_FALSE(fs::exists(legacy));
  EXPECT_TRUE(fs::exists(file_));
}

TEST_F(SavedStateTest, StateDirectoryChecks) {
  EXPECT_TRUE(fragd::check_state_dir(dir_ / "made", geteuid()));
  EXPECT_TRUE(fs::is_directory(dir_ / "made"));
  fs::create_directory(dir_ / "open");
  chmod((dir_ / "open").c_str(), 0777);
  auto r = fragd::check_state_dir(dir_ / "open", geteuid());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("writable by group or others"), std::string::npos);
  fs::create_directory_symlink(dir_ / "made", dir_ / "link");
  EXPECT_FALSE(fragd::check_state_dir(dir_ / "link", geteuid()));
}

TEST_F(SavedStateTest, SecondLockHolderIsRefusedWithTheFirstsPid) {
  const std::string path = dir_ / "act.lock";
  auto first = fragd::ActLock::acquire(path, "run in act mode");
  ASSERT_TRUE(first) << first.error().message;
  // A second open file description: flock refuses it, in this process as in another.
  auto second = fragd::ActLock::acquire(path, "run in act mode");
  ASSERT_FALSE(second);
  const std::string& m = second.error().message;
  EXPECT_NE(m.find("fragd pid " + std::to_string(getpid())), std::string::npos) << m;
  EXPECT_NE(m.find("mode: observe"), std::string::npos) << m;
  first->reset();
  EXPECT_TRUE(fragd::ActLock::acquire(path, "run in act mode")) << "released with its holder";
}

}  // namespace
