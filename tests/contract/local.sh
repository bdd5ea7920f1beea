#!/bin/bash
# The contract suite against the local backend.
exec bash "$(dirname "${BASH_SOURCE[0]}")/contract.sh" local
