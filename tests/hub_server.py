"""A loopback server that speaks the parts of the Hugging Face Hub HTTP API that the real clients use.

The tests run the real ``huggingface_hub``, ``transformers`` and ``datasets`` clients against it, so pushing and
pulling is exercised end to end with no internet. It keeps repositories in memory:

* auth: ``Authorization: Bearer <token>``; :data:`TOKENS` maps tokens to users. Writes need a valid token; private
  repositories are visible to their owner only (others get 401 ``RepoNotFound``, as on the Hub);
* ``GET /api/whoami-v2``; ``POST /api/repos/create``; ``POST /api/repos/delete``;
* ``GET /api/{models,datasets}/{id}[/revision/{rev}]`` (repo info with siblings);
* ``POST /api/{type}s/{id}/preupload/{rev}``; ``POST /{prefix}{id}.git/info/lfs/objects/batch`` (basic transfer) and
  ``PUT /lfs-upload/{oid}``; ``POST /api/{type}s/{id}/commit/{rev}`` (NDJSON: header, file, lfsFile, deletedFile,
  deletedFolder; ``parentCommit`` checked);
* ``GET /api/{type}s/{id}/tree/{rev}[/{path}]``, ``POST /api/{type}s/{id}/paths-info/{rev}``,
  ``GET /api/{type}s/{id}/refs``, ``GET /api/{type}s/{id}/commits/{rev}``;
* ``GET``/``HEAD /{prefix}{id}/resolve/{rev}/{path}`` with ``X-Repo-Commit``, ``ETag``, ``X-Linked-Etag``/``Size``
  and byte ranges.

Faults for error-path tests: :meth:`HubServer.fail_next` answers matching requests with an HTTP status (e.g. 500)
or drops the connection without answering. :attr:`HubServer.log` records ``(method, path)`` of every request.
It imports nothing from huggingface_hub, so it can start before the clients read ``HF_ENDPOINT``.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

TOKENS = {"hf_alice_write": "alice", "hf_bob_write": "bob"}
LFS_SUFFIXES = (".safetensors", ".parquet", ".arrow", ".bin", ".pt", ".gguf", ".png", ".npy")
PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/"}


@dataclass
class Blob:
    content: bytes
    lfs: bool

    @property
    def git_oid(self) -> str:
        return hashlib.sha1(b"blob %d\0" % len(self.content) + self.content).hexdigest()

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()


@dataclass
class Commit:
    sha: str
    parent: str | None
    title: str
    files: dict[str, Blob]
    date: str


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    owner: str
    private: bool
    commits: list[Commit] = field(default_factory=list)
    branches: dict[str, str] = field(default_factory=dict)

    def commit(self, rev: str) -> Commit | None:
        sha = self.branches.get(rev, rev)
        return next((c for c in self.commits if c.sha == sha), None)


class HubState:
    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.lock = threading.RLock()
        self.failures: list[dict] = []
        self.log: list[tuple[str, str]] = []

    def new_repo(self, repo_type: str, repo_id: str, owner: str, private: bool) -> Repo:
        repo = Repo(repo_type, repo_id, owner, private)
        now = _now()
        gitattributes = Blob("".join(f"*{s} filter=lfs diff=lfs merge=lfs -text\n" for s in LFS_SUFFIXES).encode(),
                             False)
        first = Commit(hashlib.sha1(f"{repo_type}/{repo_id}/initial".encode()).hexdigest(), None, "initial commit",
                       {".gitattributes": gitattributes}, now)
        repo.commits.append(first)
        repo.branches["main"] = first.sha
        self.repos[(repo_type, repo_id)] = repo
        return repo


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _Drop(Exception):
    """Close the connection without answering."""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, fmt: str, *args) -> None:  # keep pytest output clean
        pass

    # ------------------------------------------------------------------------------------------------ plumbing
    @property
    def state(self) -> HubState:
        return self.server.state

    @property
    def base(self) -> str:
        return f"http://{self.server.server_address[0]}:{self.server.server_address[1]}"

    def user(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        return TOKENS.get(auth[7:]) if auth.startswith("Bearer ") else None

    def body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        return b""

    def send(self, status: int, payload=None, headers: dict | None = None, raw: bytes | None = None,
             head: bool = False) -> None:
        data = raw if raw is not None else (b"" if payload is None else json.dumps(payload).encode())
        self.send_response(status)
        if raw is None:
            self.send_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def error(self, status: int, code: str | None, message: str, head: bool = False) -> None:
        headers = {"X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self.send(status, {"error": message}, headers, head=head)

    def injected_fault(self, method: str, path: str) -> bool:
        with self.state.lock:
            for f in self.state.failures:
                if f["times"] > 0 and f["method"] in (None, method) and re.search(f["pattern"], path):
                    f["times"] -= 1
                    if f["status"] is None:
                        raise _Drop()
                    self.body()
                    self.error(f["status"], None, f"injected failure {f['status']}")
                    return True
        return False

    def dispatch(self, method: str) -> None:
        url = urlparse(self.path)
        path = unquote(url.path)
        self.state.log.append((method, path))
        try:
            if self.injected_fault(method, path):
                return
            self.route(method, path, parse_qs(url.query))
        except _Drop:
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:  # the client may already have gone; a dropped connection is what we simulate anyway
                pass

    do_GET = lambda self: self.dispatch("GET")  # noqa: E731
    do_HEAD = lambda self: self.dispatch("HEAD")  # noqa: E731
    do_POST = lambda self: self.dispatch("POST")  # noqa: E731
    do_PUT = lambda self: self.dispatch("PUT")  # noqa: E731
    do_DELETE = lambda self: self.dispatch("DELETE")  # noqa: E731

    # ------------------------------------------------------------------------------------------------- routing
    def route(self, method: str, path: str, query: dict) -> None:
        if path == "/api/whoami-v2":
            user = self.user()
            if user is None:
                return self.error(401, None, "Invalid credentials in Authorization header")
            return self.send(200, {"type": "user", "name": user, "fullname": user.title(), "orgs": [],
                                   "auth": {"type": "access_token",
                                            "accessToken": {"displayName": "test", "role": "write"}}})
        if path == "/api/validate-yaml" and method == "POST":
            return self.validate_yaml(json.loads(self.body() or b"{}"))
        if path == "/api/repos/create" and method == "POST":
            return self.create_repo(json.loads(self.body() or b"{}"))
        if path == "/api/repos/delete" and method == "POST":
            return self.delete_repo(json.loads(self.body() or b"{}"))
        if path.startswith("/lfs-upload/") and method == "PUT":
            return self.lfs_upload(path.rsplit("/", 1)[1])
        m = re.match(r"^/(datasets/|spaces/)?([^/]+/[^/]+)\.git/info/lfs/objects/batch$", path)
        if m and method == "POST":
            return self.lfs_batch(self.kind(m.group(1)), m.group(2))
        m = re.match(r"^/api/(models|datasets|spaces)/([^/]+/[^/]+)(?:/(.*))?$", path)
        if m:
            return self.api(method, m.group(1)[:-1], m.group(2), m.group(3) or "", query)
        m = re.match(r"^/(datasets/|spaces/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)$", path)
        if m and method in ("GET", "HEAD"):
            return self.resolve(self.kind(m.group(1)), m.group(2), m.group(3), m.group(4), head=method == "HEAD")
        return self.error(404, None, f"no route for {method} {path}")

    @staticmethod
    def kind(prefix: str | None) -> str:
        return {"datasets/": "dataset", "spaces/": "space"}.get(prefix or "", "model")

    def visible_repo(self, repo_type: str, repo_id: str, head: bool = False, write: bool = False) -> Repo | None:
        repo = self.state.repos.get((repo_type, repo_id))
        user = self.user()
        if repo is None or (repo.private and user != repo.owner):
            self.error(401 if user is None else 404, "RepoNotFound", "Repository not found", head=head)
            return None
        if write and user != repo.owner:
            self.error(403, None, "You don't have the rights to write to this repository", head=head)
            return None
        return repo

    # ---------------------------------------------------------------------------------------------- repos
    def create_repo(self, payload: dict) -> None:
        user = self.user()
        if user is None:
            return self.error(401, None, "Invalid credentials in Authorization header")
        namespace = payload.get("organization") or user
        if namespace != user:
            return self.error(403, None, f"You don't have the rights to create a repo under {namespace}")
        repo_type = payload.get("type") or "model"
        repo_id = f"{namespace}/{payload['name']}"
        private = payload.get("private") or payload.get("visibility") == "private"
        url = f"{self.base}/{PREFIX[repo_type]}{repo_id}"
        with self.state.lock:
            if (repo_type, repo_id) in self.state.repos:
                return self.send(409, {"error": "You already created this repo", "url": url})
            self.state.new_repo(repo_type, repo_id, user, bool(private))
        return self.send(200, {"url": url, "name": repo_id, "id": repo_id})

    def validate_yaml(self, payload: dict) -> None:
        """The Hub checks card metadata; here: the YAML block must parse to a mapping."""
        import yaml

        content = payload.get("content", "")
        m = re.match(r"^---\n(.*?)\n---", content, re.S)
        try:
            data = yaml.safe_load(m.group(1)) if m else {}
        except yaml.YAMLError as err:
            return self.send(400, {"errors": [{"message": f"invalid YAML: {err}"}]})
        if data is not None and not isinstance(data, dict):
            return self.send(400, {"errors": [{"message": "metadata must be a mapping"}]})
        return self.send(200, {"warnings": [] if data else [{"message": "empty or missing yaml metadata"}]})

    def delete_repo(self, payload: dict) -> None:
        repo_type = payload.get("type") or "model"
        repo_id = f"{payload.get('organization') or self.user()}/{payload['name']}"
        if self.visible_repo(repo_type, repo_id, write=True) is None:
            return
        with self.state.lock:
            del self.state.repos[(repo_type, repo_id)]
        return self.send(200, {})

    def repo_info(self, repo: Repo, rev: str) -> None:
        commit = repo.commit(rev)
        if commit is None:
            return self.error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        info = {"_id": repo.repo_id, "id": repo.repo_id, "author": repo.owner, "sha": commit.sha,
                "private": repo.private, "gated": False, "disabled": False, "downloads": 0, "likes": 0,
                "tags": [], "lastModified": commit.date, "createdAt": repo.commits[0].date,
                "siblings": [{"rfilename": p} for p in sorted(commit.files)]}
        if repo.repo_type == "model":
            info["modelId"] = repo.repo_id
        self.send(200, info)

    # ------------------------------------------------------------------------------------------------- api
    def api(self, method: str, repo_type: str, repo_id: str, rest: str, query: dict) -> None:
        write = rest.startswith(("preupload", "commit/")) and method == "POST"
        repo = self.visible_repo(repo_type, repo_id, write=write)
        if repo is None:
            return
        if rest == "" and method == "GET":
            return self.repo_info(repo, "main")
        if rest.startswith("revision/"):
            return self.repo_info(repo, rest[len("revision/"):])
        if rest.startswith("preupload/"):
            files = json.loads(self.body())["files"]
            return self.send(200, {"files": [
                {"path": f["path"], "uploadMode": "lfs" if self.is_lfs(f["path"], f.get("size", 0)) else "regular",
                 "shouldIgnore": False} for f in files]})
        if rest.startswith("commit/"):
            return self.commit(repo, rest[len("commit/"):])
        if rest.startswith("tree/"):
            rev, _, sub = rest[len("tree/"):].partition("/")
            return self.tree(repo, rev, sub, recursive=query.get("recursive", ["false"])[0] in ("true", "True", "1"))
        if rest.startswith("paths-info/"):
            return self.paths_info(repo, rest[len("paths-info/"):])
        if rest == "refs":
            return self.send(200, {"branches": [{"name": b, "ref": f"refs/heads/{b}", "targetCommit": s}
                                                for b, s in repo.branches.items()], "tags": [], "converts": []})
        if rest.startswith("commits/"):
            commit = repo.commit(rest[len("commits/"):])
            if commit is None:
                return self.error(404, "RevisionNotFound", "Invalid rev id")
            chain = []
            while commit is not None:
                chain.append({"id": commit.sha, "title": commit.title, "message": "", "date": commit.date,
                              "authors": [{"user": repo.owner}]})
                commit = repo.commit(commit.parent) if commit.parent else None
            return self.send(200, chain)
        return self.error(404, None, f"no api route for {method} {rest}")

    @staticmethod
    def is_lfs(path: str, size: int) -> bool:
        return path.endswith(LFS_SUFFIXES) or size > 10_000_000

    def entry(self, path: str, blob: Blob) -> dict:
        out = {"type": "file", "oid": blob.git_oid, "size": len(blob.content), "path": path}
        if blob.lfs:
            out["lfs"] = {"oid": blob.sha256, "size": len(blob.content), "pointerSize": 134}
        return out

    def tree(self, repo: Repo, rev: str, sub: str, recursive: bool) -> None:
        commit = repo.commit(rev)
        if commit is None:
            return self.error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        prefix = sub.strip("/") + "/" if sub.strip("/") else ""
        if prefix and not any(p.startswith(prefix) for p in commit.files):
            return self.error(404, "EntryNotFound", f"{sub} does not exist")
        out, dirs = [], set()
        for path, blob in sorted(commit.files.items()):
            if not path.startswith(prefix):
                continue
            rel = path[len(prefix):]
            parts = rel.split("/")
            for i in range(1, len(parts)):
                d = prefix + "/".join(parts[:i])
                if (recursive or i == 1) and d not in dirs:
                    dirs.add(d)
                    out.append({"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0,
                                "path": d})
            if recursive or len(parts) == 1:
                out.append(self.entry(path, blob))
        self.send(200, out)

    def paths_info(self, repo: Repo, rev: str) -> None:
        commit = repo.commit(rev)
        if commit is None:
            return self.error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        raw = self.body()
        ctype = self.headers.get("Content-Type", "")
        if "json" in ctype:
            paths = json.loads(raw).get("paths", [])
        else:
            paths = parse_qs(raw.decode()).get("paths", [])
        out = []
        for p in paths:
            p = p.strip("/")
            if p in commit.files:
                out.append(self.entry(p, commit.files[p]))
            elif any(f.startswith(p + "/") for f in commit.files):
                out.append({"type": "directory", "oid": hashlib.sha1(p.encode()).hexdigest(), "size": 0, "path": p})
        self.send(200, out)

    # ------------------------------------------------------------------------------------------------- lfs
    def lfs_batch(self, repo_type: str, repo_id: str) -> None:
        if self.visible_repo(repo_type, repo_id, write=True) is None:
            return
        payload = json.loads(self.body())
        objects = []
        for obj in payload["objects"]:
            item = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if obj["oid"] not in self.state.lfs:
                item["actions"] = {"upload": {"href": f"{self.base}/lfs-upload/{obj['oid']}", "header": {}}}
            objects.append(item)
        self.send(200, {"transfer": "basic", "objects": objects}, {"Content-Type": "application/vnd.git-lfs+json"})

    def lfs_upload(self, oid: str) -> None:
        data = self.body()
        if hashlib.sha256(data).hexdigest() != oid:
            return self.error(400, None, "sha256 mismatch")
        with self.state.lock:
            self.state.lfs[oid] = data
        self.send(200, {})

    # ----------------------------------------------------------------------------------------------- commit
    def commit(self, repo: Repo, rev: str) -> None:
        lines = [json.loads(ln) for ln in self.body().decode().splitlines() if ln.strip()]
        header = next((ln["value"] for ln in lines if ln["key"] == "header"), {})
        with self.state.lock:
            head = repo.branches.get(rev)
            if head is None:
                return self.error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
            if header.get("parentCommit") and header["parentCommit"] != head:
                return self.error(412, None, "A commit has happened since. Please refresh and try again.")
            files = dict(repo.commit(head).files)
            for ln in lines:
                key, value = ln["key"], ln["value"]
                if key == "file":
                    files[value["path"]] = Blob(base64.b64decode(value["content"]), False)
                elif key == "lfsFile":
                    if value["oid"] not in self.state.lfs:
                        return self.error(400, None, f"LFS object {value['oid']} was never uploaded")
                    files[value["path"]] = Blob(self.state.lfs[value["oid"]], True)
                elif key == "deletedFile":
                    files.pop(value["path"], None)
                elif key == "deletedFolder":
                    folder = value["path"].rstrip("/") + "/"
                    files = {p: b for p, b in files.items() if not p.startswith(folder)}
            digest = hashlib.sha1(json.dumps([head, header.get("summary"), len(repo.commits),
                                              sorted((p, b.git_oid) for p, b in files.items())]).encode())
            commit = Commit(digest.hexdigest(), head, header.get("summary", ""), files,
                            _now())
            repo.commits.append(commit)
            repo.branches[rev] = commit.sha
        url = f"{self.base}/{PREFIX[repo.repo_type]}{repo.repo_id}/commit/{commit.sha}"
        self.send(200, {"success": True, "commitOid": commit.sha, "commitUrl": url})

    # ---------------------------------------------------------------------------------------------- resolve
    def resolve(self, repo_type: str, repo_id: str, rev: str, path: str, head: bool) -> None:
        repo = self.visible_repo(repo_type, repo_id, head=head)
        if repo is None:
            return
        commit = repo.commit(rev)
        if commit is None:
            return self.error(404, "RevisionNotFound", f"Invalid rev id: {rev}", head=head)
        blob = commit.files.get(path)
        if blob is None:
            return self.error(404, "EntryNotFound", f"{path} does not exist at {rev}", head=head)
        etag = blob.sha256 if blob.lfs else blob.git_oid
        headers = {"X-Repo-Commit": commit.sha, "ETag": f'"{etag}"', "Accept-Ranges": "bytes",
                   "Content-Type": "application/octet-stream"}
        if blob.lfs:
            headers.update({"X-Linked-Etag": f'"{etag}"', "X-Linked-Size": len(blob.content)})
        data = blob.content
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            start_s, _, end_s = rng[6:].partition("-")
            total = len(data)
            start = int(start_s) if start_s else max(0, total - int(end_s))
            end = min(int(end_s), total - 1) if start_s and end_s else total - 1
            headers["Content-Range"] = f"bytes {start}-{end}/{total}"
            return self.send(206, headers=headers, raw=data[start:end + 1], head=head)
        self.send(200, headers=headers, raw=data, head=head)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: HubState


class HubServer:
    """Runs :class:`Handler` on 127.0.0.1 in a background thread.

    >>> hub = HubServer().start()
    >>> hub.url.startswith("http://127.0.0.1:")
    True
    >>> hub.stop()
    """

    def __init__(self, port: int = 0) -> None:
        self.state = HubState()
        self._server = _Server(("127.0.0.1", port), Handler)
        self._server.state = self.state
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def log(self) -> list[tuple[str, str]]:
        return self.state.log

    def start(self) -> HubServer:
        self._thread = threading.Thread(target=self._server.serve_forever, name="loopback-hub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def fail_next(self, pattern: str, status: int | None = 500, times: int = 1, method: str | None = None) -> None:
        """Answer the next ``times`` requests whose path matches ``pattern`` with ``status`` (None: drop them)."""
        with self.state.lock:
            self.state.failures.append({"pattern": pattern, "status": status, "times": times, "method": method})

    def clear_failures(self) -> None:
        with self.state.lock:
            self.state.failures.clear()

    def files(self, repo_id: str, repo_type: str = "model", rev: str = "main") -> dict[str, bytes]:
        """The files of a repository at a revision, for assertions."""
        commit = self.state.repos[(repo_type, repo_id)].commit(rev)
        return {p: b.content for p, b in commit.files.items()}

    def commits(self, repo_id: str, repo_type: str = "model") -> list[str]:
        return [c.title for c in self.state.repos[(repo_type, repo_id)].commits]


#: The server the test session runs (set by the root conftest.py).
ACTIVE: HubServer | None = None
