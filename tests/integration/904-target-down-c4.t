#!/usr/bin/env bash
# 903-target-down.t with four bulk requests open at once, for 30 s.
WRITE_CONCURRENCY=4 DOWN_S=${DOWN_S:-30} exec bash "$(dirname "$0")/903-target-down.t"
