#!/usr/bin/env bash
# 905-target-faults.t with four bulk requests open at once.
WRITE_CONCURRENCY=4 exec bash "$(dirname "$0")/905-target-faults.t"
