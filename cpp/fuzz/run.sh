#!/usr/bin/env bash
# Runs the ingest fuzzer for SECONDS from a seed corpus of small real fixtures, unzipped to
# /tmp at run time (never committed). Crashes land in /tmp/attnprof_fuzz/crashes.
#   cpp/fuzz/run.sh FUZZER_BINARY [SECONDS]
set -euo pipefail
fuzzer=$1
seconds=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
fixtures=${ATTNPROF_FIXTURES_DIR:-$here/../../../shared/fixtures}
work=/tmp/attnprof_fuzz
mkdir -p "$work/seeds" "$work/corpus" "$work/crashes"
for f in hta/triton_example_triton_example.json.gz hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz \
         hta/amd_trace_mi250_minitoy_train_ROCm6_2_kineto.json.gz tracelens/torch_compile_triton_trace.json.gz; do
  gunzip -c "$fixtures/$f" > "$work/seeds/$(basename "$f" .gz)"
done
printf '{"traceEvents": []}' > "$work/seeds/empty_events.json"
"$fuzzer" "$work/corpus" "$work/seeds" -max_total_time="$seconds" -max_len=131072 -timeout=20 \
  -rss_limit_mb=4096 -artifact_prefix="$work/crashes/" -print_final_stats=1
