"""Worker processes of the peer benchmark and the tensor files they share.

Each contender runs as a long-lived process speaking the JSON-lines protocol
of PROTOCOL.md; this module starts them, sends requests and reads replies, and
writes/reads the raw tensor files of the protocol.
"""
import json
import os
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "int64": np.int64}


class WorkerError(RuntimeError):
    pass


class Worker:
    """One contender's process. ask() sends a request and returns its reply."""

    def __init__(self, argv, env, log_path):
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     env=env, cwd=HERE)
        hello = self._read()
        if not hello.get("ok"):
            raise WorkerError(f"{argv[0]} did not start: {hello}")
        self.name = hello["contender"]
        self.versions = hello.get("versions", {})

    def _read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise WorkerError(f"worker exited (code {self.proc.poll()}); see {self.log.name}")
        return json.loads(line)

    def ask(self, request):
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        return self._read()

    def close(self):
        try:
            self.ask({"op": "quit"})
        except (WorkerError, BrokenPipeError, ValueError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def start_workers(build_dir, threads, contenders, log_dir):
    """The contenders' workers for one thread count, in a fixed order."""
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                # Keep freed memory in the heap: page faults cost ~15 us per page on these VMs,
                # and peers that allocate per call would otherwise pay them on every call.
                "MALLOC_MMAP_THRESHOLD_": str(1 << 30), "MALLOC_TRIM_THRESHOLD_": str(1 << 31),
                "MALLOC_TOP_PAD_": str(1 << 28)})
    commands = {
        "canary": [os.path.join(build_dir, "bench", "canary_peer_worker"), "--threads", str(threads)],
        "onnxruntime": ["node", os.path.join(HERE, "ort_worker.mjs"), "--threads", str(threads)],
        "torch-eager": ["/usr/bin/python3", os.path.join(HERE, "torch_worker.py"), "--mode", "eager",
                        "--threads", str(threads)],
        "torch-script": ["/usr/bin/python3", os.path.join(HERE, "torch_worker.py"), "--mode", "script",
                         "--threads", str(threads)],
    }
    workers = {}
    for name in contenders:
        workers[name] = Worker(commands[name], env, os.path.join(log_dir, f"{name}-t{threads}.log"))
    return workers


class TensorFiles:
    """Writes input tensors once as raw files and describes them for requests."""

    def __init__(self, directory):
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        self.count = 0

    def describe(self, inputs):
        described = []
        for name, array in inputs.items():
            path = os.path.join(self.directory, f"t{self.count}.bin")
            self.count += 1
            np.ascontiguousarray(array).tofile(path)
            described.append({"name": name, "dtype": str(array.dtype), "shape": list(array.shape), "file": path})
        return described


def read_tensor(desc):
    dtype = DTYPES[desc["dtype"]]
    count = int(np.prod(desc["shape"])) if desc["shape"] else 1
    data = np.fromfile(desc["file"], dtype=dtype, count=count, offset=desc.get("offset", 0))
    return data.reshape(desc["shape"])


def read_outputs(descs):
    """Output tensors by name, in the order the worker listed them."""
    return {d["name"]: read_tensor(d) for d in descs}
