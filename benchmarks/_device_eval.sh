# Session 2, nvidia-h200-x2: the example evaluation report on 2 GPUs (one worker each).
set -x
R=$PWD
python -m pip install -q --no-index --find-links .wheels --no-deps .wheels/libcst-*.whl .wheels/pyyaml-*.whl 2>&1 | tail -1
python -m pip install -q --no-index --find-links .wheels rich matplotlib 2>&1 | tail -1
python -m pip install -q --no-deps .wheels/tritonlint-*.whl 2>&1 | tail -1
nvidia-smi --query-gpu=index,name,driver_version,uuid --format=csv,noheader
cd /tmp
mkdir -p g && cp $R/cases/t1/gelu/gelu_torch.py $R/cases/t1/gelu/gelu_triton_ascend_impl.py g/
python -m tritonlint.runtime_check.verify --op_name gelu --verify_dir g --seeds 6 --tolerance three_term --output $OUT/gelu_three_term.json | tail -3
mkdir -p rep && cp -r $R/docs/example-report/runs rep/ 2>/dev/null
timeout 480 python $R/benchmarks/example_report.py /tmp/subs -- --out /tmp/rep --backend cuda --seeds 2 --repeats 2 --bench-repeats 30 --operators
echo "eval exit $?"
tar czf $OUT/example-report.tgz -C /tmp rep
