#!/usr/bin/env bash
# The netns helpers of test scripts are the tools' (tools/common/netns.sh: one copy, and tools
# never depend on test/): sourcing this file sources that one.
# shellcheck source=../../tools/common/netns.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../tools/common/netns.sh"
