// SPDX-License-Identifier: Apache-2.0
// /proc/iomem: parse_iomem_ram() on any text. Accepted ranges are non-empty
// and sorted.
#include "concerns/pageblocks/pageblock.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = fragd::parse_iomem_ram(fragd_fuzz::as_text(data, size), "iomem");
  if (!r) {
    FUZZ_CHECK(r.error().message.rfind("iomem:", 0) == 0, "an error names the file");
    return 0;
  }
  FUZZ_CHECK(!r->empty(), "an accepted file has a range");
  for (size_t i = 0; i < r->size(); ++i) {
    FUZZ_CHECK((*r)[i].start_pfn < (*r)[i].end_pfn, "ranges are not empty");
    if (i > 0) FUZZ_CHECK((*r)[i - 1].start_pfn <= (*r)[i].start_pfn, "ranges are sorted");
  }
  return 0;
}
