#!/usr/bin/env bash
# Issue 15, fourth to sixth passes (sessions 8-10, no device then): the reader (guided blocks, single-threaded
# blosc, batched zstd decoding, chunk files read a group at a time through io_uring) at 16/8/4/2 cores; at 16
# and 8 the same reader reading chunk files one by one through os (ZARRVIEW_NO_URING=1, as before session 10),
# at 16 decoding zstd chunk by chunk too (ZARRVIEW_NO_BATCH=1, as before session 9), and with held-GIL file
# calls (ZARRVIEW_HELD_IO=1, which also reads files one by one).
# Run by the device tool from the project root after `bash ../shared/tools/many-cores/prepare.sh` here:
# carry [".whl"], command `bash bench/cores_ab.sh`, timeout 600; about 8 minutes (ROUNDS=9 to be sure).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
R=${ROUNDS:-11}
{ echo "nproc $(nproc)"; lscpu | grep -E 'Model name|Socket|NUMA|L3'; python3 --version; } > "$OUT/env.txt" 2>&1
B() {  # tag cpus settings rounds
  local tag=$1 cs=$2 settings=$3 r=$4
  [ "$(el)" -gt "${BUDGET:-500}" ] && { echo "== SKIP $tag at $(el)s"; return; }
  echo "== RUN $tag cpus='${cs:-all}' $settings at $(el)s"
  env $settings timeout 150 ${cs:+taskset -c $cs} python3 bench/bench_read.py --readers zl,ts --rounds $r --data-dir /tmp/data --json $OUT/$tag.json 2>&1 | grep -v "^data:\|reference data\|^\["
  echo "== END $tag at $(el)s"
}
{
mkdir -p /tmp/data
python3 -c "from zarrview.zarrlib.storage import uring; print('io_uring usable:', uring.for_thread() is not None, '(IF FALSE, c* RUNS ARE THE nouring READER)')"
python3 -c "from zarrview.zarrlib.storage import held_io as h; t = h.mount_type('/tmp/data'); print('file system of /tmp/data:', t, '(held calls possible)' if t in h.LOCAL_TYPES and h._calls else '(HELD RUNS ARE THE DEFAULT READER)')"
B c16 "" "" $R
B nouring16 "" ZARRVIEW_NO_URING=1 $R
B c8 0-7 "" $R
B nouring8 0-7 ZARRVIEW_NO_URING=1 $R
B c4 0-3 "" $R
B c2 0-1 "" $R
B nobatch16 "" "ZARRVIEW_NO_BATCH=1 ZARRVIEW_NO_URING=1" $R
B held16 "" ZARRVIEW_HELD_IO=1 $R
python3 bench/bench_read.py --scaling $OUT/c2.json $OUT/c4.json $OUT/c8.json $OUT/c16.json
} 2>&1 | tee "$OUT/log.txt"
