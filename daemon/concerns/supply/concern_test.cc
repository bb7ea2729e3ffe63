// SPDX-License-Identifier: Apache-2.0
// The NFD feature file as the Daemon drives its concern: written once the supply figures are
// ready, with the labels the snapshot and the supply port give, tried again after a failed write,
// moved on a reload and removed when fragd stops. No BPF, no root.
#include "concerns/supply/concern.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "kernel/procfs_fixtures.h"
#include "fragd/concern_fixtures.h"

namespace {

using namespace fragd;
namespace fs = std::filesystem;

constexpr uint64_t kFeaturesSecond = 1'000'000'000ULL;

std::string feature_file_text_of(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// One node whose free memory is all of order `order` (order 0: score 100, order 10: score 0).
MemSnapshot one_zone_free_at(unsigned order) {
  MemSnapshot m;
  m.zones.push_back(fragd::test::zone_with_free(0, {{order, 4096 >> order}}));
  return m;
}

// 2 MiB: 1536 free and 512 makeable (4 GiB: label 4); 1 GiB: 2 free, 1 makeable (label 2).
Result<Supply> two_sizes(const SupplyAsk& ask, const Tick&) {
  Supply s;
  s.size_kib = ask.size_kib;
  if (ask.size_kib == 2048) {
    s.free = 1536;
    s.makeable = 512;
  } else if (ask.size_kib == 1048576) {
    s.free = 2;
    s.makeable = 1;
  } else {
    return make_error("size not asked for by the labels");
  }
  return s;
}

struct FeatureFile {
  fragd::test::TempDir dir;
  std::string path = dir.path() + "/features.d/fragd";
  Shared sh{Config{}};
  bool ready = true;
  FeatureFile() {
    fs::create_directories(dir.path() + "/features.d");
    sh.cfg.nfd_features_file = path;
  }
  MemSnapshot mem = one_zone_free_at(0);  // what a tick read
  Tick at(uint64_t now) const { return Tick{now, &mem}; }
  std::unique_ptr<FeaturesConcern> concern() {
    return std::make_unique<FeaturesConcern>(sh, two_sizes, [this] { return ready; });
  }
};

TEST(FeaturesConcern, WritesTheLabelsOnceReadyAndRemovesThemWhenFragdStops) {
  FeatureFile t;
  t.ready = false;
  auto f = t.concern();
  f->tick(t.at(100 * kFeaturesSecond));
  EXPECT_FALSE(fs::exists(t.path)) << "no label from a first guess, before the supply figures are ready";
  t.ready = true;
  f->tick(t.at(101 * kFeaturesSecond));
  ASSERT_TRUE(fs::exists(t.path));
  const std::string text = feature_file_text_of(t.path);
  EXPECT_NE(text.find("fragd-hugepages-2Mi-gib=4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("fragd-hugepages-1Gi-count=2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("fragd-fragmentation=high\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# +expiry-time="), std::string::npos) << "labels of a stopped fragd must expire: " << text;
  EXPECT_FALSE(fs::exists(t.dir.path() + "/features.d/.fragd.tmp")) << "the temporary file is renamed into place";
  f.reset();
  EXPECT_FALSE(fs::exists(t.path)) << "a stopped fragd labels nothing";
}

TEST(FeaturesConcern, ALabelFollowsTheSnapshotOnlyAfterTheHold) {
  FeatureFile t;
  t.sh.cfg.nfd_hold_ns = 60 * kFeaturesSecond;
  auto f = t.concern();
  f->tick(t.at(100 * kFeaturesSecond));
  ASSERT_NE(feature_file_text_of(t.path).find("fragd-fragmentation=high\n"), std::string::npos);
  t.mem = one_zone_free_at(10);  // every free page in order-10 blocks: score 0
  f->tick(t.at(110 * kFeaturesSecond));
  EXPECT_NE(feature_file_text_of(t.path).find("fragd-fragmentation=high\n"), std::string::npos)
      << "the label held while its new value is younger than nfd.hold";
  for (uint64_t s = 120; s <= 180; s += 10) f->tick(t.at(s * kFeaturesSecond));
  EXPECT_NE(feature_file_text_of(t.path).find("fragd-fragmentation=low\n"), std::string::npos) << feature_file_text_of(t.path);
}

TEST(FeaturesConcern, AFileThatCannotBeWrittenIsWrittenAtTheNextPeriodOnceItCan) {
  FeatureFile t;
  fs::remove_all(t.dir.path() + "/features.d");
  auto f = t.concern();
  f->tick(t.at(100 * kFeaturesSecond));
  EXPECT_FALSE(fs::exists(t.path));
  fs::create_directories(t.dir.path() + "/features.d");
  f->tick(t.at(101 * kFeaturesSecond));
  EXPECT_FALSE(fs::exists(t.path)) << "labels are computed once a period, not at every tick";
  f->tick(t.at(100 * kFeaturesSecond + FeaturesConcern::kPeriodNs));
  EXPECT_TRUE(fs::exists(t.path)) << "the failed write is done again at the next period, labels unchanged";
}

TEST(FeaturesConcern, AReloadToAnotherPathMovesTheFile) {
  FeatureFile t;
  auto f = t.concern();
  f->tick(t.at(100 * kFeaturesSecond));
  ASSERT_TRUE(fs::exists(t.path));
  const std::string moved = t.dir.path() + "/features.d/fragd-2";
  t.sh.cfg.nfd_features_file = moved;
  f->reload();
  EXPECT_FALSE(fs::exists(t.path)) << "the old path's labels go at the reload";
  f->tick(t.at(101 * kFeaturesSecond));
  EXPECT_TRUE(fs::exists(moved)) << "the new path is written at the next tick, without waiting for a period";
  t.sh.cfg.nfd_features_file.clear();
  f->reload();
  EXPECT_FALSE(fs::exists(moved)) << "nfd.features_file emptied: no file";
  f->tick(t.at(102 * kFeaturesSecond));
  EXPECT_FALSE(fs::exists(moved));
}

}  // namespace
