// SPDX-License-Identifier: Apache-2.0
// The scheduler's view (nfd.features_file): a Node Feature Discovery feature file with a few
// bucketed labels (concerns/supply/labels.h) that nfd-worker publishes on the node. Written when
// a label changes and every kRefreshNs, with an expiry so that a node whose fragd stopped loses
// the labels; removed when fragd stops.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "concerns/concern.h"
#include "concerns/supply/labels.h"
#include "concerns/supply/supply.h"

namespace fragd {

class FeaturesConcern : public Concern {
 public:
  using SupplyPort = std::function<Result<Supply>(const SupplyAsk&, const Tick&)>;
  // `ready`: whether the supply figures rest on what they should (the first pageblock scan has
  // ended, or the scan is off): no label is written from a first guess.
  FeaturesConcern(Shared& sh, SupplyPort supply, std::function<bool()> ready);
  ~FeaturesConcern() override;
  void tick(const Tick& t) override;
  void reload() override;
  // The labels' raw values at a tick (what the file would say without hysteresis).
  std::optional<LabelInputs> inputs(const Tick& t) const;

  static constexpr uint64_t kPeriodNs = 10'000'000'000ULL;   // labels computed this often
  static constexpr uint64_t kRefreshNs = 300'000'000'000ULL;  // the file rewritten at least this often
  static constexpr uint64_t kExpiryNs = 900'000'000'000ULL;   // its labels expire this long after a write

 private:
  void write(uint64_t now);
  void remove();

  Shared& sh_;
  SupplyPort supply_;
  std::function<bool()> ready_;
  LabelHysteresis labels_;
  std::string path_;  // the file written (to remove at stop or when the key changes)
  uint64_t last_ns_ = 0, written_ns_ = 0;
  bool dirty_ = false;
};

}  // namespace fragd
