"""Embedding model speed: milliseconds per inference run by sequence length, one thread, and the
throughput of two single-threaded sessions running in parallel on two threads.

    pip install --target /tmp/e5tools onnxruntime==1.31.1 numpy==2.4.6   # install.sh's pins
    PYTHONPATH=/tmp/e5tools python3 benches/e5_speed.py [LABEL=MODEL.onnx[,disable=Opt1;Opt2]]...

With no argument it measures the installed default model (~/.cache/sitebot/models/
multilingual-e5-small-int8/model.onnx, as install.sh caches it) with the session sitebot uses
(src/knowledge/embed.rs: one intra-op thread, every graph optimization, SkipLayerNormFusion disabled).
Each argument is one configuration: a model file and optionally the optimizers to disable. The
configurations are measured in alternation, round after round, so that load from other processes on a
shared machine falls on all of them alike; the figures are medians over every round of the thread's
CPU time per run (a single-threaded session runs on the calling thread, so this is the run's cost
without the time other processes held the core; on a quiet machine it equals the wall time). The
parallel throughput is wall-clock by nature: it needs two otherwise idle cores. The inputs are
random piece ids below 30,000 (valid for MiniLM too) of the given lengths (the cost does not depend on
which pieces they are).
The ONNX Runtime is the Python package on the path: use the version install.sh pins (its DERIVE_TOOLS).
"""

import os
import sys
import threading
import time

import numpy as np
import onnxruntime as ort

LENGTHS = (8, 16, 26, 32, 64, 128, 256)
ROUNDS = int(os.environ.get("E5_SPEED_ROUNDS", "5"))
RUNS = int(os.environ.get("E5_SPEED_RUNS", "20"))  # per length, per round
PARALLEL_LENGTH = 26  # a median SciFact question, "query: " included
PARALLEL_SECONDS = 2.0
DEFAULT = os.path.expanduser("~/.cache/sitebot/models/multilingual-e5-small-int8/model.onnx")
SITEBOT_DISABLED = ["SkipLayerNormFusion"]


def session(path, disabled):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if disabled:
        options.add_session_config_entry("optimization.disable_specified_optimizers", ";".join(disabled))
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def feed(length, seed=0):
    ids = np.random.default_rng(seed).integers(5, 30000, size=(1, length)).astype(np.int64)
    ids[0, 0], ids[0, -1] = 0, 2
    return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}


def parse(arg):
    label, _, rest = arg.partition("=")
    path, _, opts = rest.partition(",")
    disabled = []
    for opt in filter(None, opts.split(",")):
        key, _, value = opt.partition("=")
        if key != "disable":
            sys.exit(f"e5_speed.py: unknown option {key!r}")
        disabled = [v for v in value.split(";") if v]
    return label, os.path.expanduser(path), disabled


def parallel_rate(path, disabled, length):
    """Runs a second across two sessions on two threads, against one session on one thread."""
    sessions = [session(path, disabled) for _ in range(2)]
    inputs = feed(length)
    for s in sessions:
        for _ in range(5):
            s.run(None, inputs)

    def rate(active):
        counts = [0] * len(active)
        stop = time.perf_counter() + PARALLEL_SECONDS

        def work(i):
            while time.perf_counter() < stop:
                active[i].run(None, inputs)
                counts[i] += 1

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(active))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return sum(counts) / PARALLEL_SECONDS

    return rate(sessions[:1]), rate(sessions)


def main():
    configs = [parse(a) for a in sys.argv[1:]] or [("installed", DEFAULT, SITEBOT_DISABLED)]
    print(f"onnxruntime {ort.__version__}, {ROUNDS} rounds x {RUNS} runs per length, one thread per session")
    sessions = {label: session(path, disabled) for label, path, disabled in configs}
    inputs = {n: feed(n) for n in LENGTHS}
    for s in sessions.values():
        for n in LENGTHS:
            for _ in range(3):
                s.run(None, inputs[n])
    times = {(label, n): [] for label in sessions for n in LENGTHS}
    for _ in range(ROUNDS):
        for label, s in sessions.items():
            for n in LENGTHS:
                for _ in range(RUNS):
                    t0 = time.thread_time()
                    s.run(None, inputs[n])
                    times[(label, n)].append(time.thread_time() - t0)
    width = max(len(label) for label in sessions)
    print(f"{'CPU ms/run':<{width}}  " + "  ".join(f"{n:>7}" for n in LENGTHS))
    for label in sessions:
        print(f"{label:<{width}}  " + "  ".join(f"{np.median(times[(label, n)]) * 1000:7.2f}" for n in LENGTHS))
    if len(sessions) > 1:
        first = next(iter(sessions))
        for label in list(sessions)[1:]:
            print(f"{label + ' / ' + first:<{width}}  " + "  ".join(
                f"{np.median(times[(label, n)]) / np.median(times[(first, n)]):7.2f}" for n in LENGTHS))
    print(f"throughput at {PARALLEL_LENGTH} pieces (runs a second): one session on one thread, "
          f"two sessions on two threads")
    for label, path, disabled in configs:
        one, two = parallel_rate(path, disabled, PARALLEL_LENGTH)
        print(f"{label:<{width}}  {one:7.0f}  {two:7.0f}  ({two / one:.2f}x)")


if __name__ == "__main__":
    main()
