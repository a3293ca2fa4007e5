#!/usr/bin/env bash
# Runs libFuzzer targets one after another, SECONDS each:
#   cpp/fuzz/run.sh FUZZ_BIN_DIR SECONDS TARGET...   (targets: ingest, and the readers of
#                                                     cpp/fuzz/reader_inputs.h)
# Seeds: for ingest, small real fixtures (unzipped at run time, never committed) and the saved
# regressions of cpp/tests/ingest/fuzz_regressions/; for a reader, cpp/fuzz/seeds/<target>/,
# what is generated here from real files (the SDPA grid fixture as JSON lines; Reports that the
# dev build's CLI writes for small fixtures, one and an array of two) and the saved
# regressions of cpp/tests/fuzz/regressions/<target>/. Saved inputs are read in place; new
# ones go to the work dir's corpus.
# Exits non-zero on a crash, a leak (LeakSanitizer), undefined behaviour (the build makes UBSan
# fatal), a broken error contract (fuzz_reader.cpp), a timeout or running out of memory; the
# input that did it lands in $ATTNPROF_FUZZ_WORK/<target>/crashes (default /tmp/attnprof_fuzz).
# Each target's last line of statistics ("stat::number_of_executed_units") is its input count.
set -euo pipefail
bin_dir=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
fixtures=${ATTNPROF_FIXTURES_DIR:-$root/../shared/fixtures}
work=${ATTNPROF_FUZZ_WORK:-/tmp/attnprof_fuzz}
cli=${ATTNPROF_CLI:-$root/build/dev/attnprof}

# Reports with attention calls: GPT-2 on the H200 with SDPA and with eager attention (a diff pair).
report_traces="h200-torch2.11/traces/gpt2_sdpa_fp16_b8_s1024.pt.trace.json.gz h200-torch2.11/traces/gpt2_eager_fp16_b8_s1024.pt.trace.json.gz"

generate_seeds() {  # target seed_dir
  local target=$1 seeds=$2
  case $target in
    ingest)
      for f in hta/triton_example_triton_example.json.gz hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz \
               hta/amd_trace_mi250_minitoy_train_ROCm6_2_kineto.json.gz tracelens/torch_compile_triton_trace.json.gz; do
        gunzip -c "$fixtures/$f" > "$seeds/$(basename "$f" .gz)"
      done ;;
    explain_batch)  # the grid's rows, 5 to a file (inputs of a few KB), as `explain --batch` reads them
      python3 - "$fixtures/h200-torch2.11/sdpa_grid_cuda_sample.json" "$seeds" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
for i in range(0, len(rows), 5):
    with open(f"{sys.argv[2]}/grid_{i // 5}.jsonl", "w") as out:
        out.writelines(json.dumps(r) + "\n" for r in rows[i:i + 5])
PY
      ;;
    report)
      if [ -x "$cli" ]; then
        local traces=() t
        for t in $report_traces; do traces+=("$fixtures/$t"); done
        "$cli" analyze "${traces[0]}" --json "$seeds/one.report.json" > /dev/null
        "$cli" analyze "${traces[@]}" --json "$seeds/two_runs.report.json" > /dev/null
      else
        echo "run.sh: $cli not built: the report target starts from its committed seeds only" >&2
      fi ;;
  esac
}

max_len_of() {
  case $1 in
    ingest | report) echo 131072 ;;
    heads) echo 65536 ;;
    arguments) echo 256 ;;
    *) echo 8192 ;;
  esac
}

for target in "$@"; do
  fuzzer=$bin_dir/attnprof_fuzz_$target
  dir=$work/$target
  rm -rf "$dir/seeds"
  mkdir -p "$dir/seeds" "$dir/corpus" "$dir/crashes"
  generate_seeds "$target" "$dir/seeds"
  inputs=("$dir/corpus" "$dir/seeds")
  if [ "$target" = ingest ]; then
    inputs+=("$root/cpp/tests/ingest/fuzz_regressions")
  else
    [ -d "$here/seeds/$target" ] && inputs+=("$here/seeds/$target")
    [ -d "$root/cpp/tests/fuzz/regressions/$target" ] && inputs+=("$root/cpp/tests/fuzz/regressions/$target")
  fi
  echo "== fuzz $target: ${seconds}s"
  "$fuzzer" "${inputs[@]}" -max_total_time="$seconds" -max_len="$(max_len_of "$target")" -timeout=20 \
    -rss_limit_mb=4096 -detect_leaks=1 -artifact_prefix="$dir/crashes/" -print_final_stats=1
done
