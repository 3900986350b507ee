# Session 2: the gate's timed-output check on the GPU (H100): 4 cases through `tritonlint --run`,
# and the three timing hostiles through seed 002's benchmark command.
R=$PWD
python -m pip install -q --no-index --find-links .wheels --no-deps .wheels/libcst-*.whl .wheels/pyyaml-*.whl 2>&1 | tail -1
python -m pip install -q --no-index --find-links .wheels rich 2>&1 | tail -1
python -m pip install -q --no-deps .wheels/tritonlint-*.whl 2>&1 | tail -1
cd /tmp
python -m tritonlint $R/cases/t1/softmax/softmax_triton_ascend_impl.py $R/cases/t2/rope/rope_triton_ascend_impl.py \
  $R/cases/t3/causal_conv1d/causal_conv1d_triton_ascend_impl.py $R/cases/t2/moe_topk_softmax/moe_topk_softmax_triton_ascend_impl.py --run --seeds 2 --json -o $OUT/run.json
python - <<'PY'
import json, os
d = json.load(open(os.environ["OUT"] + "/run.json"))
for f in d["files"]:
    rt = f["runtime"]; b = rt.get("benchmark") or {}
    print(f["path"].split("/")[-1], rt["verify"]["passed_cases"], "/", rt["verify"]["total_cases"], "speedup", b.get("speedup_vs_torch"),
          [r["status"] + ":" + str(r["error_type"]) for r in b.get("per_shape_results", [])],
          "sync_wait_ms", [((r.get(k) or {}).get("sync_wait_ms"), (r.get(k) or {}).get("idle_sync_wait_ms"), (r.get(k) or {}).get("avg_latency_ms"))
                           for r in b.get("per_shape_results", []) for k in ("framework", "implementation")])
PY
for h in timing_aware wrong_when_repeated side_stream; do
  rm -rf g && mkdir g && cp $R/cases/t1/gelu/gelu_torch.py g/ && cp $R/tests/fixtures/hostile/gelu_$h.py g/gelu_triton_ascend_impl.py
  python -m tritonlint.runtime_check.benchmark --op_name gelu --verify_dir g --verify_not_required --backend cuda
  python -c "import json; r=json.load(open('g/perf_result.json'))['per_shape_results'][0]; print('$h', r['status'], r['error_type'], (r['error_msg'] or '')[:160])"
done
