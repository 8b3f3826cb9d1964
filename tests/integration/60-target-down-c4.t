#!/usr/bin/env bash
# 60-target-down.t with four bulk requests open at once.
WRITE_CONCURRENCY=4 exec bash "$(dirname "$0")/60-target-down.t"
