"""Session set-up shared by the tests and the doctests.

A loopback Hub server (tests/hub_server.py) starts first and ``HF_ENDPOINT`` points at it before any Hugging Face
library is imported: Hub tests talk to it with the real clients, and anything else that tries the Hub reaches it
too instead of the internet.
"""

import atexit
import os
import shutil
import tempfile

# Under pytest-xdist each of the N workers is its own process: one thread each for torch and the tokenizers'
# BLAS, or N workers x all cores oversubscribe the machine and spin-wait (5-10x slower on 2 cores).
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "RAYON_NUM_THREADS"):
        os.environ[_var] = "1"

from tests.hub_server import HubServer  # noqa: E402

HUB = HubServer().start()
os.environ["HF_ENDPOINT"] = HUB.url
os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ["HF_HUB_OFFLINE"] = "0"
os.environ["HF_DATASETS_OFFLINE"] = "0"
os.environ["HF_HOME"] = _HF_HOME = tempfile.mkdtemp(prefix="cfaug-tests-hf-home-")
# The session's datasets cache and Hub downloads (up to 1.6 GB): removed when the run ends, so runs do not fill
# the disk.
atexit.register(shutil.rmtree, _HF_HOME, ignore_errors=True)
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["HF_HUB_ETAG_TIMEOUT"] = "5"
os.environ["HF_HUB_DOWNLOAD_TIMEOUT"] = "10"
os.environ.pop("HF_TOKEN", None)
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import tests.hub_server as _hub_server  # noqa: E402

_hub_server.ACTIVE = HUB


def pytest_addoption(parser):
    parser.addoption("--quick", action="store_true",
                     help="a smoke run: the first test of each test file, no integration or long tests and no "
                          "doctests (every feature touched once, in a few minutes)")
    parser.addoption("--smoke-all", action="store_true",
                     help="also the benchmarks' smoke runs that take a minute or more (tests/test_benchmark_smoke.py)")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--smoke-all"):
        heavy = [item for item in items if item.get_closest_marker("heavy_smoke")]
        if heavy:
            config.hook.pytest_deselected(items=heavy)
            items[:] = [item for item in items if not item.get_closest_marker("heavy_smoke")]
    if not config.getoption("--quick"):
        return
    seen, keep, drop = set(), [], []
    for item in items:
        path = item.nodeid.split("::")[0]
        if (not path.startswith("tests/") or path in seen or item.get_closest_marker("integration")
                or item.get_closest_marker("long")):
            drop.append(item)
            continue
        seen.add(path)
        keep.append(item)
    config.hook.pytest_deselected(items=drop)
    items[:] = keep
