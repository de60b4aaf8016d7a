#!/usr/bin/env bash
# bench/tools/run_all.sh: runs every benchmark program of bench/ and prints each claim's verdict.
#
#   meson setup build-bench -Dbenchmarks=enabled && meson compile -C build-bench && bench/tools/run_all.sh build-bench
#
#   bench/tools/run_all.sh BUILD_DIR [--require-gpu] [--quick] [--repetitions N] [--min-time S] [--out DIR]
#
# For each program, bench/tools/ratios.py runs it (Google Benchmark, N repetitions interleaved in random
# order, medians) and judges its rows against baselines measured in the same run:
#
#   get_stream_routes   equal instruction counts (instruction_counts.py: static where objdump
#                       exists, executed where valgrind does): every route/ row what
#                       route/cudaStream_t executes; the timed rows (route/ <= 1.02x), from
#                       rounds/routes, judged only where their control is within 1%
#   shared_stream_copy  shared_stream copy+destroy <= 0.8x std::shared_ptr on 1 thread, <= 1.0x
#                       on 2 threads copying the same object (shared_stream_copy_threads2), from
#                       rounds/copy
#   stream_pool  (GPU)  stream_pool get+drop >= 100x faster than cudaStreamCreate+Destroy, from
#                       rounds/pool; cuda.core's create+close shown beside the per-call rows
#   stream_creation (GPU) shared_stream::create+drop <= 1.05x every raw create+destroy (runtime
#                       and driver, with and without priority), from stream_pool's rounds/creation
#                       row (1000 repetitions of one round each, 100 with --quick, whatever
#                       --repetitions says): each ratio the median of the per-round ratios of
#                       its counters
#   ordering     (GPU)  streamlike::wait <= 1.2x the raw floor, <= 1.10x the driver's floor
#                       (cuEventRecord + cuStreamWaitEvent, what wait makes), < 1x an event per call, and
#                       <= 1.05x the wait as it was before it became capture-safe, from rounds/ordering
#   partition    (GPU)  stream_pool::get_for + drop <= 2x get + drop, for a green and a plain caller
#   partition_creation (GPU) shared_stream and unique_stream on a partition: create + drop <= 1.05x
#                       cuGreenCtxStreamCreate + cuStreamDestroy, from partition's rounds/creation
#                       (as stream_creation)
#   owner_queries (GPU) shown (compare_builds.py judges them against the previous library)
#   current_stream      current_stream(0) <= 1.3x torch's own aoti_torch_get_current_cuda_stream
#                       in the same loop, in a torch-only process (the real libtorch_cuda.so where
#                       python3 imports torch, else the stand-in); current_stream() <= 1.5x a bare
#                       cuCtxGetDevice with no framework loaded (needs a driver or the fake CUDA)
#
# Every judged row is judged from paired rounds (bench/rounds.hpp: each round runs every way of a
# claim in a short block, in a shuffled order; each ratio is the median of the per-round ratios)
# in each of several processes, the verdict the median over the processes: per-call rows of
# separate benchmarks drift apart over a run by more than a claim's margin. Each claim has a
# control (its baseline measured again in the same rounds). A control whose ratio is off 1 by more
# than its tolerance (1% for the routes and for creation, 2% for the waits and the partitions, 5%
# for the copy, 10% for the pool) turns that claim's verdicts into INCONCLUSIVE: the run was too
# noisy to tell. The per-call rows are shown beside them, not judged.
#
# The GPU programs exist only where nvcc was found, and skip themselves (exit 77) without a CUDA
# device: their targets then read SKIP, which fails the run only with --require-gpu (use it on
# the GPU machine, so that a missing device cannot pass for a success). Where a device exists,
# bench/tools/references.py measures cuda.core's and torch's figures for the same operations in this
# run; they are printed beside ours as REFERENCE lines, not judged (with --require-gpu a
# library that gives no figure is a failure).
#
# Host rows are compared on CPU time (a shared machine's other jobs do not count), GPU rows on
# real time (a CUDA call may wait for the driver without using the CPU). Raw JSON and the log go
# to --out (default BUILD_DIR/bench-results). The log names the commit ($STREAMLIKE_COMMIT, else
# `git rev-parse HEAD`) and this command. Exit status: 0 when no target failed and at least one
# passed; 1 otherwise (INCONCLUSIVE neither passes nor fails; a run of only those exits 1).
set -uo pipefail

usage() { sed -n '2,48p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

[ $# -ge 1 ] || usage 2
case "$1" in -h|--help) usage 0 ;; esac
command_line="bench/tools/run_all.sh $*"
build=$1; shift
require_gpu=0
reps=20
min_time=0.1
rounds_reps=1000 # every judged claim's rounds, one per repetition (creation's about 4 ms each, some 5-10 s)
# ... in each of this many processes, the verdict the median of theirs: a process's layout biases all
# its rounds alike (bench/tools/ratios.py --processes)
rounds_processes=5
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --require-gpu) require_gpu=1 ;;
    --quick) reps=5; min_time=0.05; rounds_reps=100 ;;
    --repetitions) reps=$2; shift ;;
    --min-time) min_time=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) usage 0 ;;
    *) echo "run_all.sh: unknown argument '$1'" >&2; usage 2 ;;
  esac
  shift
done

here=$(cd "$(dirname "$0")" && pwd)
bin=$build/bench
[ -d "$bin" ] || { echo "run_all.sh: no $bin: build first (meson setup $build -Dbenchmarks=enabled && meson compile -C $build)" >&2; exit 2; }
out=${out:-$build/bench-results}
mkdir -p "$out"
log=$out/run_all.log
: > "$log"
verdicts=$out/verdicts.txt
: > "$verdicts"

say() { echo "$@" | tee -a "$log"; }

# ---- the machine ------------------------------------------------------------------------------
say "== bench/tools/run_all.sh: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
commit=${STREAMLIKE_COMMIT:-$(git -C "$(dirname "$0")" rev-parse HEAD 2>/dev/null)}
say "commit: ${commit:-unknown (no git here: set STREAMLIKE_COMMIT)}$(git -C "$(dirname "$0")" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' + uncommitted changes')"
say "command: $command_line"
say "host: $(hostname)  nproc: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
say "cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
if command -v nvidia-smi >/dev/null 2>&1; then
  say "gpu: $(nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>/dev/null | paste -sd';' -)"
else
  say "gpu: (no nvidia-smi)"
fi
compilers=$(meson introspect "$build" --compilers 2>/dev/null | python3 -c 'import json, sys; h = json.load(sys.stdin)["host"]; print(", ".join(k + ": " + v["id"] + " " + v["version"] for k, v in h.items()))' 2>/dev/null)
say "compilers: ${compilers:-(unknown: meson introspect failed)}"
say "settings: judged claims: medians over $rounds_processes processes of the medians of the per-round ratios of $rounds_reps rounds; rows shown: $reps repetitions x $min_time s, interleaved, medians"
say ""

# ---- one program --------------------------------------------------------------------------------
# run_program NAME GPU(0/1) [ratios.py arguments...]
run_program() {
  run_program_as "$1" "$@"
}

# run_program_as LABEL NAME GPU(0/1) [ratios.py arguments...]: program NAME judged under LABEL (its
# TARGET lines, its JSON file), for a second judgement of one program on other rows.
run_program_as() {
  local name=$1 program=$2 gpu=$3; shift 3
  local exe=$bin/$program
  if [ "$name" = "$program" ]; then say "== $name"; else say "== $name ($program)"; fi
  if [ ! -x "$exe" ]; then
    local why="not built"
    [ "$gpu" = 1 ] && why="not built (no nvcc in this build: GPU programs need the CUDA compiler)"
    if [ "${shown_only:-0}" = 1 ]; then
      say "($why: nothing shown)" # shown rows carry no claim: their program's claims read SKIP
    else
      say "TARGET $name: SKIP ($why)" | tee -a "$verdicts"
    fi
    say ""
    return
  fi
  local output status
  output=$(python3 "$here/ratios.py" "$exe" --name "$name" --repetitions "$reps" --min-time "$min_time" \
             --json-out "$out/$name.json" "$@" 2>&1)
  status=$?
  echo "$output" | tee -a "$log"
  if [ "${shown_only:-0}" = 1 ]; then # shown rows carry no claim: a skip is their program's to report
    echo "$output" | grep -E '^(TARGET|REFERENCE) ' | grep -vE '^TARGET [^:]*: SKIP' >> "$verdicts"
  else
    echo "$output" | grep -E '^(TARGET|REFERENCE) ' >> "$verdicts"
  fi
  judge_exit "$name" "$status" "$output" "${shown_only:-0}"
  say ""
}

# run_shown_program NAME GPU(0/1) [ratios.py arguments...]: a program whose rows are shown, not
# judged (every row --info): it prints no verdict, and only a crash or a failed run is a FAIL.
run_shown_program() {
  shown_only=1 run_program "$@"
}

# judge_exit NAME STATUS OUTPUT [SHOWN]: a FAIL for NAME unless the judge's exit status and its TARGET
# lines agree (0: only PASS; 1: a FAIL; 3: an INCONCLUSIVE; 77: a SKIP). A crash (a Python
# traceback, any other status) or a run that printed no verdict can then never pass for a
# success, nor drop its claims from the summary.
judge_exit() {
  local name=$1 status=$2 output=$3 shown=${4:-0} targets why=""
  targets=$(echo "$output" | grep -E '^TARGET ')
  if echo "$output" | grep -q '^Traceback (most recent call last)'; then
    why="the judge crashed (exit $status): see the traceback above"
  elif [ "$status" -eq 2 ]; then
    why="the run itself failed: see above"
  elif [ "$shown" = 1 ] && [ -z "$targets" ]; then
    case $status in
      0 | 77) ;;
      *) why="the judge exited with $status: see above" ;;
    esac
  elif [ -z "$targets" ]; then
    why="printed no verdict (exit $status): see above"
  else
    case $status in
      0) echo "$targets" | grep -qvE ': PASS' && why="exit 0 but a verdict is not PASS" ;;
      1) echo "$targets" | grep -qE ': FAIL' || why="exit 1 without a FAIL verdict: see above" ;;
      3) echo "$targets" | grep -qE ': INCONCLUSIVE' || why="exit 3 without an INCONCLUSIVE verdict" ;;
      77) echo "$targets" | grep -qE ': SKIP' || why="exit 77 without a SKIP verdict" ;;
      *) why="the judge exited with $status: see above" ;;
    esac
  fi
  [ -n "$why" ] && say "TARGET $name: FAIL ($why)" | tee -a "$verdicts" >/dev/null
  return 0
}

# ---- the programs and their targets -------------------------------------------------------------
# paired ROUND_ROW: sets `rounds` to the ratios.py arguments that judge a claim from the paired
# rounds of ROUND_ROW in several processes (bench/rounds.hpp).
paired() { rounds=(--filter "^$1" --rounds "$1" --repetitions "$rounds_reps" --processes "$rounds_processes"); }

# The routes' claim rests on what the code is: the instruction counts below. The timed rows are
# judged (route/ <= 1.02x route/cudaStream_t) from rounds/routes only where their control is
# within 1%: on a host whose timing moves more than that, the verdict would be about the machine.
# A control off by more reads INCONCLUSIVE, which neither passes nor fails.
routes='route/(stream_view|cuda::stream_ref|tag_invoke_friend|member_get_stream|member_stream|rmm_like_both_conversions)'
paired rounds/routes
run_program get_stream_routes 0 "${rounds[@]}" \
  --compare "$routes" 'route/cudaStream_t' '<=' 1.02 \
  --control 'control/route_cudaStream_t_again' 'route/cudaStream_t' 0.01
shown_only=1 run_program_as get_stream_routes_rows get_stream_routes 0 --filter '^(route|control|diag|by_value)/' \
  --info '(route|control|diag|by_value)/.*' 'route/cudaStream_t'

say "== get_stream_routes: instruction counts"
if [ -x "$bin/get_stream_routes" ] && command -v objdump >/dev/null && command -v nm >/dev/null; then
  ic=$(python3 "$here/instruction_counts.py" "$bin/get_stream_routes" 2>&1)
  ic_status=$?
  echo "$ic" | tee -a "$log"
  echo "$ic" | grep -E '^TARGET ' >> "$verdicts"
  judge_exit "get_stream_routes instructions" "$ic_status" "$ic"
else
  echo "TARGET get_stream_routes instructions: SKIP (needs objdump and nm)" | tee -a "$log" >> "$verdicts"
fi
# Executed, not only compiled: callgrind's counts per iteration, where valgrind is installed.
if [ -x "$bin/get_stream_routes" ] && command -v valgrind >/dev/null; then
  ic=$(python3 "$here/instruction_counts.py" "$bin/get_stream_routes" --callgrind 2>&1)
  ic_status=$?
  echo "$ic" | tee -a "$log"
  echo "$ic" | grep -E '^TARGET ' >> "$verdicts"
  judge_exit "get_stream_routes instructions (callgrind)" "$ic_status" "$ic"
else
  echo "TARGET get_stream_routes instructions (callgrind): SKIP (needs valgrind)" | tee -a "$log" >> "$verdicts"
fi
say ""

# The copy on one thread and on two threads copying the same objects, each from its rounds.
paired 'rounds/copy/iterations:1/real_time/threads:1'
run_program shared_stream_copy 0 "${rounds[@]}" \
  --compare 'copy/shared_stream_keep_alive' 'copy/std::shared_ptr<int>' '<=' 0.8 \
  --control 'control/std::shared_ptr<int>_again' 'copy/std::shared_ptr<int>' 0.05
paired 'rounds/copy/iterations:1/real_time/threads:2'
run_program_as shared_stream_copy_threads2 shared_stream_copy 0 "${rounds[@]}" \
  --compare 'copy/shared_stream_keep_alive' 'copy/std::shared_ptr<int>' '<=' 1.0 \
  --control 'control/std::shared_ptr<int>_again' 'copy/std::shared_ptr<int>' 0.05
shared_ptr='copy/std::shared_ptr<int>\1'
shown_only=1 run_program_as shared_stream_copy_rows shared_stream_copy 0 --filter '^(copy|control|last|diag)/' \
  --info '(copy|control)/.*(/threads:\d+)' "$shared_ptr" \
  --info 'last/shared_stream_keep_alive(/threads:1)' 'last/std::shared_ptr<int>\1' \
  --info 'diag/shared_ptr_in_a_single_threaded_process(/threads:\d+)' "$shared_ptr"

# current_stream() against what it adds to, each in a process of its own (what is loaded is
# process-wide): in a torch-only process at most 1.3x torch's own getter called in the same loop,
# with no framework loaded at most 1.5x a bare cuCtxGetDevice. torch's real libtorch_cuda.so is
# loaded where python3 imports torch (the GPU machine); elsewhere the stand-in of
# test/fake_frameworks is, whose getter is a thread-local read: a smoke indication only.
torch_args=(--program-arg=--frameworks=torch)
torch_library=$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))' 2>/dev/null)
[ -n "$torch_library" ] && [ -f "$torch_library" ] && torch_args+=("--program-arg=--torch-library=$torch_library")
torch_direct='torch_only/aoti_torch_get_current_cuda_stream\1'
# Each judged process runs only the rows it judges; the scope's breakdown runs in one of its own.
# The copy/ rows: current_stream() of a second copy (an extension module's), which forwards to the
# registry the program's copy published, against the same baselines.
run_program_as current_stream_torch_only current_stream 0 "${torch_args[@]}" \
  --filter '^torch_only/(current_stream\(0\)|copy/current_stream\(0\)|aoti)' \
  --compare 'torch_only/current_stream\(0\)(/inside|/outside)' "$torch_direct" '<=' 1.3 \
  --compare 'torch_only/copy/current_stream\(0\)(/inside|/outside)' "$torch_direct" '<=' 1.3 \
  --control 'torch_only/aoti_torch_get_current_cuda_stream_again(/inside|/outside)' "$torch_direct" 0.1
shown_only=1 run_program_as current_stream_scope current_stream 0 "${torch_args[@]}" \
  --filter '^(torch_only/(scoped|torch_stream_guard)|diag/stream_view)' \
  --info 'torch_only/scoped_current_stream.*' 'torch_only/torch_stream_guard'
run_program_as current_stream_no_framework current_stream 0 --program-arg=--frameworks=none \
  --filter '^none/(current_stream|copy/current_stream|cuCtx)' \
  --compare 'none/current_stream\(\)' 'none/cuCtxGetDevice' '<=' 1.5 \
  --compare 'none/copy/current_stream\(\)' 'none/cuCtxGetDevice' '<=' 1.5 \
  --control 'none/cuCtxGetDevice_again' 'none/cuCtxGetDevice' 0.1 \
  --info 'none/current_stream\(\)/in_scope' 'none/cuCtxGetDevice'

# cuda.core's and torch's figures for the same operations, measured now (not judged).
refs_pool=()
refs_wait=()
if [ -x "$bin/stream_pool" ] || [ -x "$bin/ordering" ]; then
  say "== references (bench/tools/references.py)"
  required=()
  [ "$require_gpu" = 1 ] && required=(--require cuda.core --require torch)
  ref_out=$(python3 "$here/references.py" --json "$out/references.json" "${required[@]}" 2>&1)
  ref_status=$?
  echo "$ref_out" | tee -a "$log"
  if [ $ref_status -eq 1 ]; then
    echo "TARGET references: FAIL (a library's figures could not be measured: see above)" >> "$verdicts"
  fi
  figure() { echo "$ref_out" | sed -n "s/^REFERENCE-FIGURE $1 //p"; }
  # Shown, not judged: a figure from another process at another time is not paired with ours,
  # and creation drifts by more than the claim's margin between runs. "shared_stream::create +
  # drop no slower than cuda.core's create_stream() + close()" is judged where both run in the
  # same process, in the same rounds: bench/python/bench_package.py, whose Stream.create() is
  # shared_stream::create plus the Python object, so a pass there holds for C++ too.
  f=$(figure 'cuda\.core\.create+close'); [ -n "$f" ] && refs_pool+=(--reference 'create/(shared|unique)_stream::create\+drop' "$f" 'cuda.core create_stream()+close() (this run)')
  f=$(figure 'torch\.create+drop'); [ -n "$f" ] && refs_pool+=(--reference 'pool/stream_pool::get\+drop' "$f" 'torch.cuda.Stream() from its pool + drop (this run)')
  f=$(figure 'cuda\.core\.wait'); [ -n "$f" ] && refs_wait+=(--reference 'wait/streamlike::wait\(.*\)' "$f" 'cuda.core Stream.wait(other) (this run)')
  f=$(figure 'torch\.wait_stream'); [ -n "$f" ] && refs_wait+=(--reference 'wait/streamlike::wait\(.*\)' "$f" 'torch Stream.wait_stream(other) (this run)')
  for line in $(echo "$ref_out" | sed -n 's/^REFERENCE-MISSING \([^:]*\):.*/\1/p'); do
    echo "REFERENCE references: $line not measured (see the log)" >> "$verdicts"
  done
  say ""
fi

# The pool, >= 100x faster than a raw create + destroy, from rounds/pool; the per-call rows shown
# (cuda.core's figure beside them, and the diag/ rows).
create='create/cudaStreamCreate+cudaStreamDestroy'
paired rounds/pool
run_program stream_pool 1 "${rounds[@]}" \
  --compare 'pool/stream_pool::get\+drop' "$create" 'faster>=' 100 \
  --control 'control/cudaStreamCreate\+cudaStreamDestroy_again' "$create" 0.1
shown_only=1 run_program_as stream_pool_rows stream_pool 1 --metric real_time --filter '^(create|control|pool|diag)/' \
  --info 'create/.*|control/.*|pool/.*|diag/.*' "$create" \
  "${refs_pool[@]}"

# Creation: shared_stream::create+drop at most 1.05x every raw way to create and destroy a stream
# (runtime and driver, with and without a priority), so the fastest binds; the control within 1%.
# Judged from rounds/creation, whose every round measures each way in one window (bench/stream_pool.cu
# says why): each ratio the median over rounds of the per-round ratio (ratios.py --rounds).
ours='create/shared_stream::create\+drop'
raw_creates=()
for raw in 'cudaStreamCreate+cudaStreamDestroy' 'cudaStreamCreateWithFlags(non_blocking)+cudaStreamDestroy' \
           'cudaStreamCreateWithPriority(non_blocking)+cudaStreamDestroy' 'cuStreamCreate(non_blocking)+cuStreamDestroy' \
           'cuStreamCreateWithPriority(non_blocking)+cuStreamDestroy'; do
  raw_creates+=(--compare "$ours" "create/$raw" '<=' 1.05)
done
run_program_as stream_creation stream_pool 1 --filter '^rounds/' --rounds rounds/creation \
  --repetitions "$rounds_reps" --processes "$rounds_processes" \
  "${raw_creates[@]}" \
  --control 'control/cudaStreamCreate\+cudaStreamDestroy_again' "$create" 0.01 \
  --info 'create/unique_stream::create\+drop' "$create"

floor='wait/raw_floor:cudaEventRecord+cudaStreamWaitEvent'
per_call='wait/event_per_call:create+record+wait+destroy'
driver_floor='wait/driver_floor:cuEventRecord+cuStreamWaitEvent'
ours='wait/streamlike::wait\(shared_stream,shared_stream\)'
paired rounds/ordering
run_program ordering 1 "${rounds[@]}" \
  --compare "$ours" "$floor" '<=' 1.2 \
  --compare "$ours" "$driver_floor" '<=' 1.10 \
  --compare "$ours" "$per_call" '<' 1.0 \
  --compare "$ours" 'wait/pre_capture_check:ctx_lookup+record+wait' '<=' 1.05 \
  --control 'control/raw_floor_again' "$floor" 0.02 \
  --control 'control/driver_floor_again' "$driver_floor" 0.02 \
  --info 'wait/streamlike::wait\(cudaStream_t,cudaStream_t\)|wait/event_per_call.*' "$floor"
shown_only=1 run_program_as ordering_rows ordering 1 --metric real_time --filter '^(wait|control|diag)/' \
  --info 'wait/.*|control/.*|diag/.*' "$floor" \
  "${refs_wait[@]}"

# Partitions (bench/partition.cu): get_for + drop <= 2x a pool's get + drop; a green stream's
# create + drop <= 1.05x the driver's cuGreenCtxStreamCreate + cuStreamDestroy, from paired rounds.
green_raw='create/cuGreenCtxStreamCreate+cuStreamDestroy'
run_program partition 1 --metric real_time --filter '^(pool|diag)/' \
  --compare 'pool/stream_pool::get_for\((green|plain)\)\+drop' 'pool/stream_pool::get+drop' '<=' 2 \
  --info 'diag/.*' 'pool/stream_pool::get+drop'
run_program_as partition_creation partition 1 --filter '^rounds/creation/' --rounds rounds/creation \
  --repetitions "$rounds_reps" --processes "$rounds_processes" \
  --compare 'create/(shared|unique)_stream::create\(partition\)\+drop' "$green_raw" '<=' 1.05 \
  --control 'control/cuGreenCtxStreamCreate\+cuStreamDestroy_again' "$green_raw" 0.02
shown_only=1 run_program_as partition_creation_parts partition 1 --filter '^rounds/creation_parts/' --rounds rounds/creation_parts \
  --repetitions "$rounds_reps" --info 'parts/.*' 'parts/cuGreenCtxStreamCreate+cuStreamDestroy'

run_shown_program owner_queries 1 --metric real_time \
  --info 'query/.*|diag/.*' 'query/core:stream_control_block::facts'

# ---- summary ----------------------------------------------------------------------------------
if [ "$require_gpu" = 1 ]; then
  # A GPU program that skipped is a failure here: the device run must measure them.
  sed -i -E 's/^(TARGET (stream_pool|stream_creation|ordering|partition|partition_creation)): SKIP/\1: FAIL (--require-gpu) SKIP/' "$verdicts"
fi
pass=$(grep -cE '^TARGET .*: PASS' "$verdicts")
fail=$(grep -cE '^TARGET .*: FAIL' "$verdicts")
skip=$(grep -cE '^TARGET [^:]*: SKIP' "$verdicts")
inconclusive=$(grep -cE '^TARGET .*: INCONCLUSIVE' "$verdicts")
say "== summary ($(date -u '+%Y-%m-%d %H:%M:%S UTC'); commit ${commit:-unknown}; raw JSON and this log in $out)"
while IFS= read -r line; do
  case "$line" in
    TARGET*) say "${line#TARGET }" ;;
  esac
done < "$verdicts"
while IFS= read -r line; do
  case "$line" in
    REFERENCE*) say "(not judged) ${line#REFERENCE }" ;;
  esac
done < "$verdicts"
say "$pass passed, $fail failed, $skip skipped, $inconclusive inconclusive"
if [ "$pass" -eq 0 ]; then
  say "run_all.sh: no target passed: nothing was shown"
  exit 1
fi
[ "$fail" -eq 0 ]
