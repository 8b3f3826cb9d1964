#!/usr/bin/env bash
# 65-faults.t with four bulk requests open at once.
WRITE_CONCURRENCY=4 exec bash "$(dirname "$0")/65-faults.t"
