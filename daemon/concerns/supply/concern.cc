// SPDX-License-Identifier: Apache-2.0
#include "concerns/supply/concern.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>

#include <algorithm>

#include "concerns/act/saved_state.h"
#include "concerns/memory/score.h"

namespace fragd {

namespace {

std::string rfc3339_utc(uint64_t realtime_ns) {
  const time_t t = static_cast<time_t>(realtime_ns / 1'000'000'000ULL);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

FeaturesConcern::FeaturesConcern(Shared& sh, SupplyPort supply, std::function<bool()> ready)
    : sh_(sh), supply_(std::move(supply)), ready_(std::move(ready)), labels_(sh.cfg.nfd_hold_ns) {}

FeaturesConcern::~FeaturesConcern() { remove(); }

std::optional<LabelInputs> FeaturesConcern::inputs(const Tick& t) const {
  if (!t.mem) return std::nullopt;
  LabelInputs in;
  for (const auto& n : node_scores(t.mem->zones)) in.max_score = std::max(in.max_score, n.score);
  // Obtainable: free + makeable, asked for one page (the count does not change the figures).
  if (auto s = supply_({2048, std::nullopt, 1, -1}, t)) in.hugepages_2m = s->free + s->makeable;
  if (auto s = supply_({1048576, std::nullopt, 1, -1}, t)) in.hugepages_1g = s->free + s->makeable;
  return in;
}

void FeaturesConcern::tick(const Tick& t) {
  const uint64_t now = t.now;
  if (sh_.cfg.nfd_features_file.empty() || !ready_()) return;
  if (last_ns_ && now - last_ns_ < kPeriodNs) return;
  last_ns_ = now;
  auto in = inputs(t);
  if (!in) return;
  auto [shown, changed] = labels_.update(label_buckets(*in), now);
  if (changed || dirty_ || now - written_ns_ >= kRefreshNs) write(now);
}

void FeaturesConcern::write(uint64_t now) {
  const std::string& path = sh_.cfg.nfd_features_file;
  const std::string text =
      feature_file_text(labels_.labels(), rfc3339_utc(now_ns(CLOCK_REALTIME) + kExpiryNs));
  // nfd-worker skips dot-files: the text is written whole to one, then renamed into place.
  const auto slash = path.rfind('/');
  const std::string tmp = path.substr(0, slash + 1) + "." + path.substr(slash + 1) + ".tmp";
  Result<void> w = write_file_atomic(tmp, text);
  if (w && ::rename(tmp.c_str(), path.c_str()) != 0) {
    w = sys_error("cannot rename " + tmp + " to " + path);
    ::unlink(tmp.c_str());
  }
  if (!w) {
    sh_.warn.once("nfd " + path, "cannot write the NFD feature file (nfd.features_file): " + w.error().message +
                                     "; its directory must exist and be writable by root");
    dirty_ = true;
    return;
  }
  sh_.warn.cleared("nfd " + path, "the NFD feature file " + path + " is written again");
  path_ = path;
  written_ns_ = now;
  dirty_ = false;
}

void FeaturesConcern::remove() {
  if (path_.empty()) return;
  ::unlink(path_.c_str());  // a stopped fragd labels nothing
  path_.clear();
}

void FeaturesConcern::reload() {
  labels_.set_hold(sh_.cfg.nfd_hold_ns);
  if (path_ != sh_.cfg.nfd_features_file) {
    remove();
    dirty_ = true;
    last_ns_ = 0;
  }
}

}  // namespace fragd
