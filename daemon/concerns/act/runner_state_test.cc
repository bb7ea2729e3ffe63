// SPDX-License-Identifier: Apache-2.0
// The action runner's saved state, end to end on a scratch tree: the runner
// raises vm.compaction_proactiveness through a SysfsActuator whose procfs root
// is a temporary directory, and the file that keeps the value to restore is
// checked on disk (not through the code that wrote it).
#include "concerns/act/runner.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The number a kernel-like file holds (a write without O_TRUNC to a scratch file leaves its tail).
std::string value(const fs::path& p) {
  std::string s = slurp(p);
  return s.substr(0, s.find_first_of(" \n"));
}

void put(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::trunc);
  f << text;
}

// A procfs root holding only the file the raise writes, and a run directory.
struct Scratch {
  fs::path root;
  fs::path proc, run, pro;
  Scratch() {
    char tmpl[] = "/tmp/fragd-runner-state.XXXXXX";
    root = mkdtemp(tmpl);
    proc = root / "proc";
    run = root / "run";
    pro = proc / "sys/vm/compaction_proactiveness";
    fs::create_directories(pro.parent_path());
    fs::create_directories(run);
    fs::permissions(run, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
    put(pro, "20\n");
  }
  ~Scratch() { fs::remove_all(root); }
};

// Runs one request through a started runner and returns its outcome.
fragd::ActionOutcome run_one(fragd::ActionRunner& r, const fragd::ActionRequest& req) {
  fragd::Policy p;
  p.act = true;
  p.dry_run = false;
  r.submit(req, p);
  for (int i = 0; i < 500; i++) {
    pollfd pfd{r.event_fd(), POLLIN, 0};
    poll(&pfd, 1, 10);
    auto done = r.take_finished();
    if (!done.empty()) return done.front();
  }
  ADD_FAILURE() << "the runner did not finish the action in 5 s";
  return {};
}

fragd::ActionRequest raise_to(unsigned v) {
  fragd::ActionRequest q;
  q.id = 1;
  q.kind = fragd::ActionKind::RaiseProactiveness;
  q.node = -1;
  q.proactiveness = v;
  return q;
}

TEST(RunnerState, SymlinkedStateFileIsRefusedAndNotWrittenThrough) {
  Scratch s;
  const fs::path victim = s.root / "passwd";
  put(victim, "root:x:0:0:root:/root:/bin/bash\n");
  const fs::path state = s.run / "saved-state";
  fs::create_symlink(victim, state);
  fragd::SysfsActuator act(s.proc.string(), (s.root / "sys").string());
  fragd::ActionRunner r(act, {}, state.string());
  ASSERT_TRUE(r.start());
  const auto o = run_one(r, raise_to(90));
  r.stop();
  EXPECT_EQ(slurp(victim), "root:x:0:0:root:/root:/bin/bash\n") << "the state file's symlink was followed";
  EXPECT_EQ(o.result, "error") << "a raise whose old value cannot be kept safely must not happen";
  EXPECT_NE(o.detail.find("symbolic link"), std::string::npos) << o.detail;
  EXPECT_EQ(value(s.pro), "20") << "proactiveness was raised without its old value kept";
  EXPECT_TRUE(fs::is_symlink(state));
}

TEST(RunnerState, StateFileIsReplacedNotRewrittenInPlace) {
  Scratch s;
  const fs::path state = s.run / "saved-state";
  put(state, "");  // an earlier, empty state file: replaced by rename, never truncated in place
  chmod(state.c_str(), 0600);
  struct stat before {};
  ASSERT_EQ(stat(state.c_str(), &before), 0);
  fragd::SysfsActuator act(s.proc.string(), (s.root / "sys").string());
  fragd::ActionRunner r(act, {}, state.string());
  ASSERT_TRUE(r.start());
  const auto o = run_one(r, raise_to(90));
  ASSERT_EQ(o.result, "ok") << o.detail;
  EXPECT_EQ(value(s.pro), "90");
  struct stat after {};
  ASSERT_EQ(stat(state.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino) << "the state file was rewritten in place, not replaced by rename";
  EXPECT_EQ(after.st_mode & 07777, 0600u) << "the state file is readable by others";
  EXPECT_NE(slurp(state).find("/proc/sys/vm/compaction_proactiveness 20"), std::string::npos) << slurp(state);
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(s.run)) entries += e.path().filename() != "saved-state";
  EXPECT_EQ(entries, 0u) << "a temporary file was left beside the state file";
  r.stop();  // puts the value back and removes the file
  EXPECT_EQ(value(s.pro), "20");
  EXPECT_FALSE(fs::exists(state));
}

TEST(RunnerState, WorldWritableStateFileIsRefused) {
  Scratch s;
  const fs::path state = s.run / "saved-state";
  put(state, "");
  chmod(state.c_str(), 0666);
  fragd::SysfsActuator act(s.proc.string(), (s.root / "sys").string());
  fragd::ActionRunner r(act, {}, state.string());
  ASSERT_TRUE(r.start());
  const auto o = run_one(r, raise_to(90));
  r.stop();
  EXPECT_EQ(o.result, "error");
  EXPECT_NE(o.detail.find("writable by group or others"), std::string::npos) << o.detail;
  EXPECT_EQ(value(s.pro), "20");
}

}  // namespace
