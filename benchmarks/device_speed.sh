#!/usr/bin/env bash
# The gate-speed measurements on a CUDA machine, in the order #14 needs them, each part's output
# under $OUT (the device tool's folder) or ./out. Run through the device tool from the repository
# root, carrying the py3.12 wheels the image lacks (libcst, jsonschema and its deps, pytest,
# pytest-xdist, hypothesis) in .wheels/:
#     bash benchmarks/device_speed.sh tests       # the GPU side of the timed-phase, census, device-sharing and benchmark tests
#     bash benchmarks/device_speed.sh cases       # the 13 cases through `--run`, and (c) on four of them
#     bash benchmarks/device_speed.sh c           # (c) alone: `--run` warm and cold on four cases
#     bash benchmarks/device_speed.sh probes      # the first launch of a cached kernel; the timer after a census
#     bash benchmarks/device_speed.sh timeline    # the parent's timeline of one warm `--run`, three ways of starting its CUDA (MODES=thread for one)
#     bash benchmarks/device_speed.sh io          # a large case's trip through files; the parent's imports
#     bash benchmarks/device_speed.sh exit        # a CUDA process's way out, as it is and with os._exit
#     bash benchmarks/device_speed.sh ab          # (a), (b1) and (b); AB_PARTS=a,b1,b4,b8 for others
#     bash benchmarks/device_speed.sh scaling     # (s): eval on one GPU, then on all (a 2-GPU machine)
# Each part fits one 10-minute call; several parts in one call run in turn (`tests cases`).
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .wheels/*.whl 2>&1 | tail -1
python3 -m pip install -q --no-deps --no-build-isolation -e . 2>&1 | tail -1
export PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-/tmp/tcache}
nvidia-smi --query-gpu=name --format=csv,noheader
[ $# -gt 0 ] || set -- usage
part_c() {
    timeout 300 python3 benchmarks/gate_speed.py --parts c_warm,c_cold --only gelu,softmax,rope,add_rmsnorm_cast \
        --out "$OUT/gate_speed_c.json" 2>&1 | tail -10
}
for part in "$@"; do
echo "== $part"
case "$part" in
tests)
    timeout 330 python3 -m pytest -p no:cacheprovider -n 4 --timeout 150 --tb=short tests/test_timed_phase.py tests/test_census.py tests/test_device.py \
        tests/test_benchmark_gate.py 2>&1 | grep -E "^E |passed|failed|Error|^FAILED" | head -30 ;;
cases)
    timeout 240 python3 -m tritonlint cases/*/*/*_impl.py --run --backend cuda --seeds 2 --json > "$OUT/cases13.json" \
        2> "$OUT/cases13.err"; echo "cases rc=$?"
    python3 - "$OUT/cases13.json" <<'PY'
import json, sys
for f in json.load(open(sys.argv[1]))["files"]:
    r = f.get("runtime") or {}
    b = r.get("benchmark") or {}
    rows = [(s.get("framework") or {}).get("avg_latency_ms") for s in b.get("per_shape_results") or []], \
        [(s.get("implementation") or {}).get("avg_latency_ms") for s in b.get("per_shape_results") or []]
    print(f["path"].split("/")[-2], r.get("verdict"), (r.get("why") or "")[:120], b.get("speedup_vs_torch"), rows,
          (r.get("verify") or {}).get("phases_s"), (r.get("verify") or {}).get("child_phases_s", {}).get("candidate"))
PY
    part_c ;;
c)
    part_c ;;
probes)
    timeout 60 python3 benchmarks/probes/_probe_first_launch.py
    timeout 90 python3 benchmarks/probes/_probe_after_profiler.py ;;
timeline)
    for c in gelu softmax add_rmsnorm_cast; do  # the cache warm first
        timeout 60 python3 -m tritonlint cases/*/$c/*_impl.py --run --backend cuda > /dev/null 2>&1; done
    for mode in ${MODES:-thread sync lazy}; do for c in gelu softmax add_rmsnorm_cast; do
        t=$(date +%s.%N); timeout 60 python3 benchmarks/probes/_probe_timeline.py $mode cases/*/$c/*_impl.py $t > "$OUT/timeline_${mode}_$c.txt" 2>&1
        tail -3 "$OUT/timeline_${mode}_$c.txt"
    done; done ;;
io)
    timeout 120 python3 benchmarks/probes/_probe_case_io.py
    python3 -X importtime -c "import tritonlint.cli, tritonlint.runtime_check.gate" 2>&1 | sort -t'|' -k2 -n | tail -12 ;;
exit)  # what a process that used the device spends on its way out, as it is and with os._exit
    for how in "pass" "import os; os._exit(0)"; do for i in 1 2 3; do
        python3 -c "import time, torch; torch.empty(1, device='cuda'); torch.randn(4096, 4096, device='cuda').sum().item(); print(time.time()); $how" \
            | python3 -c "import sys, time; t = float(sys.stdin.read()); print('exit after', repr('$how'), round(time.time() - t, 3), 's')"
    done; done ;;
ab)
    timeout 560 python3 benchmarks/gate_speed.py --parts ${AB_PARTS:-a,b1,b} --out "$OUT/gate_speed_ab.json" 2>&1 | tail -8 ;;
scaling)
    timeout 560 python3 benchmarks/gate_speed.py --parts s --gens 4 --out "$OUT/gate_speed_s.json" 2>&1 | tail -6 ;;
*)
    echo "usage: $0 tests|cases|c|probes|timeline|io|exit|ab|scaling ..." >&2; exit 2 ;;
esac
done
