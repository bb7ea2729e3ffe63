// SPDX-License-Identifier: Apache-2.0
// The two formats /metrics serves. The text format (version 0.0.4) to everyone; the protobuf
// format (length-delimited io.prometheus.client.MetricFamily messages) to a scraper whose
// Accept header asks for it, as Prometheus does when it ingests native histograms. There each
// latency histogram is also a native histogram that carries every fine BPF bucket in one
// series per label set, whatever metrics.buckets leaves in the classic buckets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/family.h"
#include "base/histogram.h"

namespace fragd {

enum class ExpositionFormat { Text, Protobuf };

// The format an Accept header asks for: protobuf when it names
// application/vnd.google.protobuf with proto=io.prometheus.client.MetricFamily and
// encoding=delimited at a quality above 0 and at least that of every text type fragd serves
// (text/plain, text/*, */*); text otherwise (no header, or only types fragd does not serve).
ExpositionFormat negotiate(std::string_view accept);
const char* content_type(ExpositionFormat f);

// Families serialized: text, or protobuf with native histograms from `families.fine`.
std::string serialize(const Families& families, ExpositionFormat f);

// A fine histogram as a native one. Native bucket bounds are powers of 2^(2^-schema) of a
// second; fragd's fine buckets split each power of two of nanoseconds in 8 equal steps, and no
// such bound is one of those (a nanosecond is no power of two of a second). So each fine bucket's
// count goes whole into the native bucket holding the fine bucket's middle, at the finest schema
// (8: buckets 0.27% wide): a quantile from the native histogram is then within half a fine bucket
// of the sample's value, the resolution fragctl hist and the act engine read. The fine bucket below
// 1.024 us is the zero bucket (zero_threshold 1.024 us); the open one from 17.2 s counts at 17.2 s.
struct NativeHistogram {
  int32_t schema = 0;
  double zero_threshold = 0;
  uint64_t zero_count = 0;
  uint64_t count = 0;  // the zero bucket and every bucket: the histogram's own count
  double sum = 0;      // seconds
  std::vector<std::pair<int32_t, uint32_t>> spans;  // (offset, length), as the message encodes them
  std::vector<int64_t> deltas;                      // each bucket's count less the one before
};
inline constexpr int32_t kNativeSchema = 8;
NativeHistogram native_histogram(const LatencyHist& h);
// The native bucket (lower, upper] of `schema` that holds `seconds` > 0: its index i, the bucket
// being (2^((i-1)/2^schema), 2^(i/2^schema)].
int32_t native_bucket_index(double seconds, int32_t schema);

}  // namespace fragd
