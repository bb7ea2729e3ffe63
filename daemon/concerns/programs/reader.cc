// SPDX-License-Identifier: Apache-2.0
#include "concerns/programs/reader.h"

#include "kernel/bpf_maps.h"

namespace fragd {

BpfReader::BpfReader(const BpfMapFds& maps) : maps_(maps), ncpus_(possible_cpus()) {}

}  // namespace fragd
