#!/bin/bash
# bwrap-contract.sh: the generic environment contract against bwrap.
exec bash "$(dirname "${BASH_SOURCE[0]}")/../contract/contract.sh" bwrap
