// SPDX-License-Identifier: Apache-2.0
// The protocol's JSON form of a latency histogram (protocol/hist.h).
#include "protocol/hist.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/result.h"

using fragd::LatencyHist;
using nlohmann::json;

TEST(HistJson, RoundTrip) {
  LatencyHist h;
  h.add(10, 3);
  h.add(300000, 7);
  h.add(1ULL << 35, 1);
  json j = h;
  EXPECT_EQ(j["buckets"], json::parse("[[0,3],[" + std::to_string(fragd_hist_bucket(300000)) + ",7],[193,1]]"));
  EXPECT_EQ(j["count"], 11u);
  auto back = fragd::parse_latency_hist(json::parse(j.dump()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->buckets, h.buckets);
  EXPECT_EQ(back->count, h.count);
  EXPECT_EQ(back->sum_ns, h.sum_ns);

  auto empty = fragd::parse_latency_hist(json::parse(R"({"count":0,"sum_ns":0,"buckets":[]})"));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_EQ(empty->buckets.size(), static_cast<size_t>(FRAGD_HIST_BUCKETS));
}

TEST(HistJson, RejectsMalformed) {
  const char* bad[] = {
      R"([])",
      R"("hist")",
      R"(null)",
      R"({})",
      R"({"sum_ns":0,"buckets":[]})",
      R"({"count":0,"buckets":[]})",
      R"({"count":0,"sum_ns":0})",
      R"({"count":"5","sum_ns":0,"buckets":[]})",
      R"({"count":-1,"sum_ns":0,"buckets":[]})",
      R"({"count":1.5,"sum_ns":0,"buckets":[]})",
      R"({"count":0,"sum_ns":null,"buckets":[]})",
      R"({"count":0,"sum_ns":0,"buckets":{}})",
      R"({"count":0,"sum_ns":0,"buckets":[5]})",
      R"({"count":0,"sum_ns":0,"buckets":[[1]]})",
      R"({"count":0,"sum_ns":0,"buckets":[[1,2,3]]})",
      R"({"count":0,"sum_ns":0,"buckets":[["1",2]]})",
      R"({"count":0,"sum_ns":0,"buckets":[[1,-2]]})",
      R"({"count":0,"sum_ns":0,"buckets":[[194,1]]})",
      R"({"count":0,"sum_ns":0,"buckets":[[18446744073709551615,1]]})",
      R"({"count":0,"sum_ns":0,"buckets":[[-1,1]]})",
      R"({"count":0,"sum_ns":0,"buckets":[null]})",
  };
  for (const char* text : bad) {
    json j = json::parse(text);
    fragd::Result<LatencyHist> r = LatencyHist{};
    EXPECT_NO_THROW(r = fragd::parse_latency_hist(j)) << text;
    EXPECT_FALSE(r.ok()) << text;
    if (!r.ok()) {
      EXPECT_FALSE(r.error().message.empty()) << text;
    }
  }
  auto r = fragd::parse_latency_hist(json::parse(R"({"count":1,"sum_ns":0,"buckets":[[194,1]]})"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("out of range"), std::string::npos) << r.error().message;
}

