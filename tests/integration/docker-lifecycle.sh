#!/bin/bash
echo "1..0 # SKIP not written yet"; exit 77
