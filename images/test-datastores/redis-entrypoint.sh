#!/bin/sh
# Entrypoint of localhost/cubicle/redis, the real-node test cluster's stand-in for the chart's
# default `redis:7-bookworm`: Debian's redis-server 7 with the chart's arguments. The official
# image turns protected mode off at build time (reachable without a password, from the Service);
# Debian's build keeps it on, so it is turned off here.
set -eu
exec redis-server --protected-mode no --dir /data "$@"
