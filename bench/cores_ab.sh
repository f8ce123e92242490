#!/usr/bin/env bash
# Issue 15, fourth pass (session 8, no device then): the reader with guided blocks and single-threaded
# blosc at 16/8/4/2 cores, and the same reader with held-GIL file calls (ZARRVIEW_HELD_IO=1 and =fd) at 16 and 8.
# Run by the device tool from the project root after `bash ../shared/tools/many-cores/prepare.sh` here:
# carry [".whl"], command `bash bench/cores_ab.sh`, timeout 600; about 8 minutes (ROUNDS=9 to be sure).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
R=${ROUNDS:-11}
{ echo "nproc $(nproc)"; lscpu | grep -E 'Model name|Socket|NUMA|L3'; python3 --version; } > "$OUT/env.txt" 2>&1
B() {  # tag cpus held rounds
  local tag=$1 cs=$2 held=$3 r=$4
  [ "$(el)" -gt "${BUDGET:-500}" ] && { echo "== SKIP $tag at $(el)s"; return; }
  echo "== RUN $tag cpus='${cs:-all}' held=$held at $(el)s"
  ZARRVIEW_HELD_IO=$held timeout 150 ${cs:+taskset -c $cs} python3 bench/bench_read.py --readers zl,ts --rounds $r --data-dir /tmp/data --json $OUT/$tag.json 2>&1 | grep -v "^data:\|reference data\|^\["
  echo "== END $tag at $(el)s"
}
{
mkdir -p /tmp/data
python3 -c "from zarrview.zarrlib.storage import held_io as h; t = h.mount_type('/tmp/data'); print('file system of /tmp/data:', t, '(held calls possible)' if t in h.LOCAL_TYPES and h._calls else '(HELD RUNS ARE THE DEFAULT READER)')"
B c16 "" 0 $R
B held16 "" 1 $R
B fd16 "" fd $R
B c8 0-7 0 $R
B held8 0-7 1 $R
B fd8 0-7 fd $R
B c4 0-3 0 $R
B c2 0-1 0 $R
python3 bench/bench_read.py --scaling $OUT/c2.json $OUT/c4.json $OUT/c8.json $OUT/c16.json
} 2>&1 | tee "$OUT/log.txt"
