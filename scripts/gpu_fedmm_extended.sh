#!/usr/bin/env bash
# fedmm's extended MNIST -> MNIST-M sweep on a lent CUDA GPU, as one prepared call.
#
#   bash scripts/gpu_fedmm_extended.sh SECONDS [JOBS]
#
# Run from the repository root on the device machine, with the data carried in .gpu/data
# (mnist/ and bsds500/ as ../shared/data holds them; `make gpu-carry` puts them there) and
# $FEDREPRO_COMMIT set to the commit the tree was copied from. Stages, each logged to
# $OUT/log.txt and summarised in $OUT:
#   1. environment: GPU, torch, CUDA MPS started (several processes share the GPU);
#   2. MNIST-M generated once into the cache (so the workers do not race to write it);
#   3. check (once per results folder): eager vmapped vs graphed FedMM rounds on CUDA (speed,
#      agreement); if the graphed backend fails here, the sweep runs the eager one ($FEDREPRO_FEDMM_BACKEND=vectorized);
#   4. repeat (once per results folder): one reduced cell in two processes, bitwise compared;
#   5. sweep: the missing extended cells until SECONDS (counted from the start) minus a margin
#      for packing, then an interrupt; the results folder (ignored by git, kept while the
#      machine is warm) holds the records and checkpoints, so a second call continues;
#   6. pack: every record (JSON) into $OUT/records.tgz, with $OUT/summary.json.
# A machine given back between calls loses results/: unpack records.tgz (and check.json as
# .check.json, repeat.json as .repeat-done) into .gpu/results and carry .gpu; stage 3 merges it.
# Bring the records back with:  tar -xzf <files_at>/records.tgz -C results
# FEDMM_GPU_DRYRUN=1 runs the same stages on a CPU machine at smoke scale (to test the script
# before spending device time; nothing it computes is a GPU result).
set -u
BUDGET=${1:-540}
JOBS=${2:-16}
START=$(date +%s)
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
LOG="$OUT/log.txt"
# the working tree is not pip-installed there: a dist-info of the package's version on the path
# makes its records' keys the ones an installed checkout gives (records.versions)
META=/tmp/fedrepro-meta
VER=$(sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml | head -n 1)
mkdir -p "$META/fedrepro-$VER.dist-info"
printf 'Metadata-Version: 2.1\nName: fedrepro\nVersion: %s\n' "$VER" > "$META/fedrepro-$VER.dist-info/METADATA"
export PYTHONPATH=$PWD:$META PYTHONUNBUFFERED=1 FEDREPRO_OFFLINE=1
export FEDREPRO_DATA=$PWD/.gpu/data FEDREPRO_RESULTS=$PWD/results FEDREPRO_CACHE=$PWD/data/cache
export FEDREPRO_FEDMM_DEVICE=cuda CUBLAS_WORKSPACE_CONFIG=:4096:8
PY=${PYTHON:-python3}
DEV=cuda; RSCALE=reduced; XSCALE=extended
if [ "${FEDMM_GPU_DRYRUN:-0}" = 1 ]; then
  export FEDREPRO_FEDMM_DEVICE=cpu; DEV=cpu; RSCALE=smoke; XSCALE=smoke
fi
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
say() { echo "[$(( $(date +%s) - START )) s] $*" | tee -a "$LOG"; }

say "stage 1: environment (commit ${FEDREPRO_COMMIT:-unknown})"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | tee -a "$LOG"
$PY -c "import torch, numpy; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'numpy', numpy.__version__)" 2>&1 | tee -a "$LOG"
if nvidia-cuda-mps-control -d 2>>"$LOG"; then say "CUDA MPS started"; MPS=1; else say "no CUDA MPS: processes time-share the GPU"; MPS=0; fi

say "stage 2: MNIST-M into the cache"
$PY -c "from repro.fedmm.data import mnistm_split; [mnistm_split(s) for s in ('train', 'test')]" 2>&1 | tee -a "$LOG" || { say "MNIST-M failed: is .gpu/data carried?"; exit 1; }

# records of an earlier call, carried back in .gpu/results when the machine went back between
# calls (unpack records.tgz there); a warm machine's results/ keeps them and its checkpoints
if [ -d .gpu/results ]; then
  mkdir -p results && cp -rn .gpu/results/. results/
  say "merged $(find .gpu/results -name '*.json' | wc -l) carried records into results/"
fi

if [ -f results/.check.json ]; then
  say "stage 3: check eager vs graphed (done by an earlier call on this results folder)"
  cp results/.check.json "$OUT/check.json"
else
  say "stage 3: check eager vs graphed"
  timeout 120 $PY scripts/gpu_fedmm.py check --device $DEV --out "$OUT" 2>&1 | tee -a "$LOG"
  mkdir -p results && cp "$OUT/check.json" results/.check.json 2>/dev/null
fi
if ! grep -q '"graphed_ok": true' "$OUT/check.json" 2>/dev/null; then
  export FEDREPRO_FEDMM_BACKEND=vectorized
  say "graphed backend unusable here: the sweep runs the eager vectorized backend"
fi

if [ ! -f results/.repeat-done ]; then
  say "stage 4: repeat one reduced cell in two processes"
  timeout $(( $(left) / 2 )) $PY scripts/gpu_fedmm.py repeat --scale $RSCALE --out "$OUT" 2>&1 | tee -a "$LOG"
  mkdir -p results && cp "$OUT/repeat.json" results/.repeat-done 2>/dev/null
else
  cp results/.repeat-done "$OUT/repeat.json"
fi

SWEEP=$(( $(left) - 45 ))
if [ "$SWEEP" -gt 30 ]; then
  say "stage 5: sweep for ${SWEEP} s with ${JOBS} jobs"
  # its own process group, so the interrupt reaches the workers too (as a Ctrl-C would)
  setsid $PY scripts/gpu_fedmm.py sweep --scale $XSCALE --jobs "$JOBS" >>"$OUT/sweep.txt" 2>&1 &
  PID=$!
  ( sleep "$SWEEP"; kill -INT -- -"$PID" 2>/dev/null; sleep 20; kill -KILL -- -"$PID" 2>/dev/null ) &
  WATCH=$!
  wait "$PID"
  kill "$WATCH" 2>/dev/null
  tail -n 40 "$OUT/sweep.txt" | tee -a "$LOG"
else
  say "stage 5 skipped: ${SWEEP} s left"
fi
nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader 2>&1 | tee -a "$LOG"
[ "$MPS" = 1 ] && echo quit | nvidia-cuda-mps-control

say "stage 6: pack"
$PY scripts/gpu_fedmm.py pack --out "$OUT" 2>&1 | tee -a "$LOG"
say "done"
