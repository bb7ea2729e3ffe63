// SPDX-License-Identifier: Apache-2.0
// A latency histogram (base/histogram.h) as text, bcc style.
#pragma once

#include <string>

#include "base/histogram.h"

namespace fragd {

// bcc-style log2 histogram (as printed by bcc's runqlat/biolatency):
//
//      usecs               : count     distribution
//      262.1 -> 524.3      : 1500     |****************************************|
//
// Rows are exact: row 0 is bucket 0, [0, 2^10) ns; row k >= 1 is the octave
// [2^(9+k), 2^(10+k)) ns, which is exactly the 8 fine buckets of that power of
// two (no fine bucket straddles two rows); the last row is the open-ended
// bucket [2^34 ns, inf). The bounds are shown converted to `unit`: "nsecs"
// shows integers with an inclusive upper bound as bcc does ("1024 -> 2047");
// "usecs" (the default) shows microseconds with 1 decimal and "msecs"
// milliseconds with 3 decimals, both as the half-open [lower -> upper) of the
// row, rounded (powers of two of ns are never whole usecs). Any other unit
// name is shown as given but scaled as usecs. Only rows from the first to the
// last non-empty one are printed; the star bar is 40 characters for the
// largest row, floor(40 * count / max) for the others. Every line ends with
// '\n'. Returns "" for an empty histogram.
std::string render_log2(const LatencyHist& h, std::string unit = "usecs");

}  // namespace fragd
