set -x
R=$PWD
python -m pip install -q --no-index --find-links .wheels --no-deps .wheels/libcst-*.whl .wheels/pyyaml-*.whl 2>&1 | tail -1
python -m pip install -q --no-index --find-links .wheels rich 2>&1 | tail -1
python -m pip install -q --no-deps .wheels/tritonlint-*.whl 2>&1 | tail -1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cd /tmp
python $R/benchmarks/_probe_gelu.py $R 2>&1 | tail -5
python $R/benchmarks/gate_cases.py --seeds 2 --out $OUT 2>&1 | tail -15
