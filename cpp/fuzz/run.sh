#!/usr/bin/env bash
# Runs the ingest fuzzer for SECONDS, seeded from small real fixtures (unzipped to the work
# dir at run time, never committed) and the saved regression inputs of
# cpp/tests/ingest/fuzz_regressions/ (read in place: new inputs go to the work dir's corpus).
#   cpp/fuzz/run.sh FUZZER_BINARY [SECONDS]
# Exits non-zero on a crash, a leak (LeakSanitizer), undefined behaviour (the build makes
# UBSan fatal), a timeout or running out of memory; the input that did it lands in
# $ATTNPROF_FUZZ_WORK/crashes (default /tmp/attnprof_fuzz).
set -euo pipefail
fuzzer=$1
seconds=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
fixtures=${ATTNPROF_FIXTURES_DIR:-$here/../../../shared/fixtures}
regressions=$here/../tests/ingest/fuzz_regressions
work=${ATTNPROF_FUZZ_WORK:-/tmp/attnprof_fuzz}
mkdir -p "$work/seeds" "$work/corpus" "$work/crashes"
for f in hta/triton_example_triton_example.json.gz hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz \
         hta/amd_trace_mi250_minitoy_train_ROCm6_2_kineto.json.gz tracelens/torch_compile_triton_trace.json.gz; do
  gunzip -c "$fixtures/$f" > "$work/seeds/$(basename "$f" .gz)"
done
"$fuzzer" "$work/corpus" "$work/seeds" "$regressions" -max_total_time="$seconds" -max_len=131072 -timeout=20 \
  -rss_limit_mb=4096 -detect_leaks=1 -artifact_prefix="$work/crashes/" -print_final_stats=1
