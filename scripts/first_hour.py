"""The README's commands and quick starts, each as a user would run it (see first_hour.sh), timed.

Steps: ``bash scripts/demo.sh``; each ```python block under "## Quick start" in its own fresh process (so a quick
start that leans on another fails here); each ``cfaug`` line of the "## Command line" block on 20 embedded claims
and a two-row CAD-style file (the one change: ``cfaug train editor`` gets ``--max-steps 2``). Pushes go to a loopback
Hub server (``tests/hub_server.py``) that ``HF_ENDPOINT`` points at, with a token for the user ``you``. Results:
``runs/first_hour.json`` and a table on stdout.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_blocks(section: str, language: str) -> list[str]:
    text = (ROOT / "README.md").read_text()
    start = text.index(f"## {section}")
    end = text.find("\n## ", start + 3)
    return re.findall(rf"```{language}\n(.*?)```", text[start:end if end > 0 else None], re.S)


def main() -> int:
    from tests import hub_server

    hub_server.TOKENS["hf_you_write"] = "you"
    hub = hub_server.HubServer().start()
    work = Path(tempfile.mkdtemp(prefix="cfaug-first-hour-"))
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_you_write", "HF_HUB_DISABLE_XET": "1",
           "HF_HOME": str(work / "hf-home"), "PATH": f"{ROOT / '.venv' / 'bin'}:{os.environ['PATH']}"}
    steps: list[tuple[str, list[str], Path]] = [("demo", ["bash", str(ROOT / "scripts" / "demo.sh")], ROOT)]
    for k, code in enumerate(readme_blocks("Quick start", "python"), 1):
        (work / f"quick_start_{k}.py").write_text(code)
        steps.append((f"quick start {k}", [sys.executable, str(work / f"quick_start_{k}.py")], work))
    from cfaug_hf.data import load_feverous_sample

    load_feverous_sample().select(range(20)).to_json(str(work / "claims.jsonl"))
    (work / "cad.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
        {"text": "It was dull. The end.", "counterfactual": "It was gripping. The end.", "target": "positive"},
        {"text": "A fine cast. Loved it.", "counterfactual": "A weak cast. Hated it.", "target": "negative"}]))
    for line in readme_blocks("Command line", "bash")[0].splitlines():
        if line.startswith("cfaug "):
            argv = shlex.split(line.split("  #")[0])
            if argv[1:3] == ["train", "editor"]:
                argv += ["--max-steps", "2"]
            steps.append((" ".join(argv[:3]), argv, work))
    results = []
    for name, argv, cwd in steps:
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        results.append({"step": name, "command": " ".join(argv), "seconds": round(seconds, 1),
                        "ok": done.returncode == 0, "tail": (done.stdout + done.stderr)[-1500:]})
        print(f"{'ok  ' if done.returncode == 0 else 'FAIL'} {seconds:7.1f} s  {name}", flush=True)
        if done.returncode != 0:
            print(done.stderr[-3000:], file=sys.stderr)
    hub.stop()
    (ROOT / "runs").mkdir(exist_ok=True)
    (ROOT / "runs" / "first_hour.json").write_text(json.dumps({"cpus": os.cpu_count(), "steps": results}, indent=1))
    failed = [r["step"] for r in results if not r["ok"]]
    print(f"{len(results) - len(failed)}/{len(results)} steps passed" + (f"; failed: {failed}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
