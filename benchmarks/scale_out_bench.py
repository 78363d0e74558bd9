"""Scale-out engines in local mode: can each run the per-day function unchanged, and how long do they take?

Loads the committed sample population (or ``--population``) into a warehouse, reads each hand day's rows, computes every day's
features (``compute_day`` through ``pipelines.lib.cluster.day_features``) embedded, in this process, then on
one engine in its local mode with ``--workers``
processes: Dask (``LocalCluster`` + ``Client.map``), Ray (``ray.init`` + ``ray.remote``) or Spark
(``local[N]``, ``parallelize(...).map``, the RDD route that runs a Python function on any picklable input;
``mapInArrow``/``applyInArrow`` would need the function rewritten to take and return Arrow batches). Prints
the import, start, run and stop times of the engine (wall clock), whether every day's frames are identical to
the embedded ones, and this process's peak memory. The engine must be importable: each lives in its own
throwaway environment (docs/scale-out.md says how they were made).

    python benchmarks/scale_out_bench.py --engine dask|ray|spark [--workers 2] [--population FOLDER]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
READ_CPU: list[float] = []  # the driver's CPU reading the days' rows (read_day)


def day_rows(tmp: Path, population: Path | None) -> dict:
    """``population`` (default: the committed sample) in a warehouse; ``{day: DayRows}`` (each day's rows as
    Arrow tables)."""
    import datasets
    from detectors.features.days import read_day
    from pipelines.lib import cluster, ingest
    from pipelines.lib import warehouse as wh

    con = wh.connect(tmp / "wh.duckdb")
    try:
        ingest.ingest([population or Path(datasets.__file__).parent / "sample"], con, progress=False)
        days = [d for (d,) in con.execute("SELECT DISTINCT day FROM hands ORDER BY 1").fetchall()]
        c0 = time.process_time()
        out = {d: cluster.DayRows(d, read_day(con, d)) for d in days}
        READ_CPU.append(time.process_time() - c0)
        return out
    finally:
        con.close()


def on_dask(fn, inputs: dict, workers: int) -> dict:
    t0 = time.perf_counter()
    import logging

    from distributed import Client, LocalCluster
    t1 = time.perf_counter()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                           worker_dashboard_address=None, silence_logs=logging.ERROR, env={"POLARS_MAX_THREADS": "1"})
    client = Client(cluster)
    t2 = time.perf_counter()
    data = client.scatter(list(inputs.values()), hash=False)  # as pipelines.lib.cluster.map_days sends them
    out = dict(zip(inputs, client.gather([client.submit(fn, x, pure=False) for x in data])))
    t3 = time.perf_counter()
    client.close()
    cluster.close()
    return {"out": out, "import_s": t1 - t0, "start_s": t2 - t1, "run_s": t3 - t2, "stop_s": time.perf_counter() - t3}


def on_ray(fn, inputs: dict, workers: int) -> dict:
    t0 = time.perf_counter()
    import ray
    t1 = time.perf_counter()
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"POLARS_MAX_THREADS": "1"}})
    t2 = time.perf_counter()
    task = ray.remote(num_cpus=1)(fn)
    out = dict(zip(inputs, ray.get([task.remote(x) for x in inputs.values()])))
    t3 = time.perf_counter()
    ray.shutdown()
    return {"out": out, "import_s": t1 - t0, "start_s": t2 - t1, "run_s": t3 - t2, "stop_s": time.perf_counter() - t3}


def on_spark(fn, inputs: dict, workers: int) -> dict:
    import os

    t0 = time.perf_counter()
    from pyspark.sql import SparkSession
    t1 = time.perf_counter()
    os.environ["POLARS_MAX_THREADS"] = "1"
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers run this environment's Python, not the PATH's
    spark = (SparkSession.builder.master(f"local[{workers}]").appName("railbird-scale-out-bench")
             .config("spark.ui.enabled", "false").config("spark.python.worker.reuse", "true").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    t2 = time.perf_counter()
    pairs = spark.sparkContext.parallelize(list(inputs.items()), len(inputs)).map(lambda kv: (kv[0], fn(kv[1]))).collect()
    t3 = time.perf_counter()
    spark.stop()
    return {"out": dict(pairs), "import_s": t1 - t0, "start_s": t2 - t1, "run_s": t3 - t2, "stop_s": time.perf_counter() - t3}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--engine", choices=["dask", "ray", "spark"], required=True)
    ap.add_argument("--workers", type=int, default=2, help="worker processes (default: 2)")
    ap.add_argument("--population", type=Path, help="a generated population (default: datasets/sample)")
    args = ap.parse_args()
    from polars.testing import assert_frame_equal

    from pipelines.lib import cluster

    with tempfile.TemporaryDirectory(prefix="railbird-scale-out-") as tmp:
        t0 = time.perf_counter()
        inputs = day_rows(Path(tmp), args.population)
        t1, c1 = time.perf_counter(), time.process_time()
        embedded = cluster.run_days(cluster.day_features, inputs)
        t2, compute_cpu = time.perf_counter(), time.process_time() - c1
        r = {"dask": on_dask, "ray": on_ray, "spark": on_spark}[args.engine](cluster.day_features, inputs, args.workers)
        for day, frames in embedded.items():
            for table, frame in frames.items():
                assert_frame_equal(r["out"][day][table], frame)
    rows = sum(f.height for frames in embedded.values() for f in frames.values())
    print(f"{len(inputs)} days, {rows:,} feature rows; warehouse built and days read in {t1 - t0:.1f} s, embedded run {t2 - t1:.1f} s")
    print(f"{args.engine} local mode, {args.workers} workers: import {r['import_s']:.1f} s, start {r['start_s']:.1f} s, "
          f"run {r['run_s']:.1f} s, stop {r['stop_s']:.1f} s, total {sum(r[k] for k in ('import_s', 'start_s', 'run_s', 'stop_s')):.1f} s;"
          f" every day identical to embedded: yes")
    read = READ_CPU[0]
    print(f"the driver's part, reading the days' rows: {read:.2f} CPU-s; compute_day: {compute_cpu:.2f} CPU-s; "
          f"so one driver feeds at most {(read + compute_cpu) / read:.0f} busy workers (Amdahl: 1 / serial share "
          f"{read / (read + compute_cpu):.1%})")
    print(f"driver peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
