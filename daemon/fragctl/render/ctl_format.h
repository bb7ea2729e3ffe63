// SPDX-License-Identifier: Apache-2.0
// fragctl's renderers of control-socket answers (docs/control-protocol.md),
// one header per command: hist, status, trace, actions (compact, pool,
// action, reload), cost. The answers themselves are protocol/'s structs.
#pragma once

#include "fragctl/render/actions.h"
#include "fragctl/render/cost_text.h"
#include "fragctl/render/hist.h"
#include "fragctl/render/status.h"
#include "fragctl/render/trace.h"
#include "protocol/wire.h"
