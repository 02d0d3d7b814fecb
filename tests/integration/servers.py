"""Real servers on 127.0.0.1 for the integration suite: PostgreSQL and Redis from Debian's
packages, moto's S3 emulator, dagster-celery workers and the Dagster daemon."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent  # the virtual environment's commands (dagster, celery, moto_server)
PRODUCTION = REPO / "deploy" / "production"
BUCKET = "diprank-integration"
# The warehouse every process of the deployment is configured with (workers, daemon, webserver).
DEPLOYMENT_WAREHOUSE = f"s3://{BUCKET}/deployment"


class ServerMissing(RuntimeError):
    """A server binary is not installed (`.ci/run` installs them with apt-get)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, what: str, timeout: float = 60.0, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    tail = log.read_text()[-2000:] if log and log.exists() else ""
    raise TimeoutError(f"{what} did not listen on 127.0.0.1:{port} within {timeout:.0f} s\n{tail}")


def postgres_bin(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if not found:
        raise ServerMissing(f"{name} not found: apt-get install postgresql")
    return found


def as_postgres_user(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root; as root, run it as the package's `postgres` user."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@dataclass
class Stack:
    """The running servers and the environment of the production profile that points at them."""

    root: Path
    pg_port: int = 0
    redis_port: int = 0
    s3_port: int = 0
    processes: list[subprocess.Popen] = field(default_factory=list)
    postgres: subprocess.Popen | None = None
    s3: subprocess.Popen | None = None
    worker_logs: list[Path] = field(default_factory=list)

    @property
    def dagster_home(self) -> Path:
        return self.root / "dagster_home"

    @property
    def postgres_url(self) -> str:
        return f"postgresql+psycopg2://dagster@127.0.0.1:{self.pg_port}/dagster"

    def env(self, warehouse: str, local_dir: Path | None = None) -> dict[str, str]:
        """The production profile's variables (deploy/production/production.env.example)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DIPRANK_", "DAGSTER_", "AWS_"))}
        env.update(
            {
                "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
                "DAGSTER_HOME": str(self.dagster_home),
                "DIPRANK_POSTGRES_URL": self.postgres_url,
                "DIPRANK_EXECUTOR": "celery",
                "DIPRANK_CELERY_BROKER": f"redis://127.0.0.1:{self.redis_port}/0",
                "DIPRANK_CELERY_BACKEND": f"redis://127.0.0.1:{self.redis_port}/1",
                "DIPRANK_RAW_DIR": str(REPO / "data" / "raw"),
                "DIPRANK_WAREHOUSE_DIR": warehouse,
                "DIPRANK_LOCAL_DIR": str(local_dir or (self.root / "local")),
                # Credentials of the emulator, which accepts any.
                "AWS_ACCESS_KEY_ID": "integration",
                "AWS_SECRET_ACCESS_KEY": "integration",
                "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_ENDPOINT_URL": f"http://127.0.0.1:{self.s3_port}",
            }
        )
        return env

    def spawn(self, command: list[str], log: Path, env: dict | None = None, cwd: Path = REPO) -> subprocess.Popen:
        handle = open(log, "ab")
        process = subprocess.Popen(
            command, stdout=handle, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True
        )  # its own process group: stopped whole
        self.processes.append(process)
        return process

    def start_postgres(self) -> None:
        data = self.root / "pg"
        data.mkdir()
        if os.geteuid() == 0:
            shutil.chown(data, "postgres")
        subprocess.run(
            as_postgres_user(
                [postgres_bin("initdb"), "-D", str(data / "data"), "-A", "trust", "-U", "dagster", "--no-sync"]
            ),
            check=True,
            capture_output=True,
        )
        self.pg_port = free_port()
        log = self.root / "postgres.log"
        log.touch()
        if os.geteuid() == 0:
            shutil.chown(log, "postgres")
        self.start_postgres_server()
        deadline = time.monotonic() + 30
        while True:
            made = subprocess.run(
                as_postgres_user(
                    [postgres_bin("createdb"), "-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "dagster", "dagster"]
                ),
                capture_output=True,
                text=True,
            )
            if made.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"createdb failed: {made.stderr}")
            time.sleep(0.5)  # accepting connections before it is ready for them

    def start_postgres_server(self) -> None:
        """The PostgreSQL server on the cluster `start_postgres` made, listening on its port."""
        data, log = self.root / "pg", self.root / "postgres.log"
        self.postgres = self.spawn(
            as_postgres_user(
                [
                    postgres_bin("postgres"),
                    "-D",
                    str(data / "data"),
                    "-p",
                    str(self.pg_port),
                    "-k",
                    str(data),
                    "-c",
                    "listen_addresses=127.0.0.1",
                    "-c",
                    "fsync=off",
                ]
            ),
            log,
        )
        wait_for_port(self.pg_port, "PostgreSQL", log=log)

    def restart_postgres(self) -> None:
        """Restart PostgreSQL as a service manager does (fast shutdown, then a new server on the
        same data): every open connection is cut."""
        assert self.postgres is not None
        os.killpg(self.postgres.pid, signal.SIGINT)  # PostgreSQL's fast shutdown (SIGTERM waits for every client)
        self.postgres.wait(timeout=60)
        self.processes.remove(self.postgres)
        self.start_postgres_server()

    def pause_s3(self, seconds: float) -> None:
        """Stop the S3 emulator (SIGSTOP) for `seconds`, then let it go on: requests meanwhile wait."""
        assert self.s3 is not None
        os.killpg(self.s3.pid, signal.SIGSTOP)
        try:
            time.sleep(seconds)
        finally:
            os.killpg(self.s3.pid, signal.SIGCONT)

    def start_redis(self) -> None:
        server = shutil.which("redis-server")
        if not server:
            raise ServerMissing("redis-server not found: apt-get install redis-server")
        self.redis_port = free_port()
        log = self.root / "redis.log"
        self.spawn(
            [server, "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], log
        )
        wait_for_port(self.redis_port, "Redis", log=log)

    def start_s3(self) -> None:
        self.s3_port = free_port()
        log = self.root / "moto.log"
        self.s3 = self.spawn([str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(self.s3_port)], log)
        wait_for_port(self.s3_port, "moto S3 emulator", log=log)
        import s3fs

        s3fs.S3FileSystem(
            key="integration", secret="integration", client_kwargs={"endpoint_url": f"http://127.0.0.1:{self.s3_port}"}
        ).mkdir(BUCKET)

    def write_instance(self) -> None:
        self.dagster_home.mkdir()
        shutil.copy(PRODUCTION / "dagster.yaml", self.dagster_home / "dagster.yaml")

    def create_storage(self, env: dict[str, str]) -> None:
        """Dagster's tables in PostgreSQL, made once before any process uses them (as
        docs/DEPLOYMENT.md has a deployment do): processes that start together on an empty
        database each create them, and all but one fail ("type snapshots already exists")."""
        made = subprocess.run(
            [str(BIN / "dagster"), "instance", "migrate"], env=env, cwd=REPO, capture_output=True, text=True
        )
        if made.returncode != 0:
            raise RuntimeError(f"dagster instance migrate failed:\n{made.stdout}{made.stderr}")

    def start_workers(self, count: int, env: dict[str, str]) -> None:
        for n in range(1, count + 1):
            log = self.root / f"worker{n}.log"
            self.worker_logs.append(log)
            self.spawn(
                [
                    str(BIN / "dagster-celery"),
                    "worker",
                    "start",
                    "-A",
                    "dagster_celery.app",
                    "-y",
                    str(PRODUCTION / "celery.yaml"),
                    "-n",
                    f"diprank{n}",
                ],
                log,
                env=env,
            )
        deadline = time.monotonic() + 90
        while not all(" ready." in log.read_text() for log in self.worker_logs if log.exists()) or not all(
            log.exists() for log in self.worker_logs
        ):
            if time.monotonic() > deadline:
                raise TimeoutError(
                    "celery workers did not become ready:\n"
                    + "\n".join(log.read_text()[-1500:] for log in self.worker_logs)
                )
            time.sleep(0.5)

    def start_daemon(self, env: dict[str, str]) -> subprocess.Popen:
        return self.spawn(
            [str(BIN / "dagster-daemon"), "run", "-w", str(REPO / "workspace.yaml")], self.root / "daemon.log", env=env
        )

    def stop_process(self, process: subprocess.Popen) -> None:
        """Stop one server the way a service manager does (SIGTERM to its process group)."""
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=60)
        self.processes.remove(process)

    def steps_done_by_worker(self) -> list[int]:
        """Celery tasks each worker finished (from its log)."""
        return [log.read_text().count("succeeded in") for log in self.worker_logs]

    def queues_by_worker(self, env: dict[str, str]) -> dict[str, list[str]]:
        """The queues each running worker consumes, as the workers answer over the broker."""
        from celery import Celery  # the integration extra; `make test` collects this module without it

        app = Celery(broker=env["DIPRANK_CELERY_BROKER"])
        try:
            answers = app.control.inspect(timeout=10).active_queues() or {}
        finally:
            app.close()
        return {worker: sorted(queue["name"] for queue in queues) for worker, queues in answers.items()}

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for process in reversed(self.processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


def start_stack(workers: int = 2) -> Stack:
    root = Path(tempfile.mkdtemp(prefix="diprank-integration-"))
    root.chmod(0o755)  # the postgres user must reach its data folder inside
    stack = Stack(root)
    try:
        stack.start_postgres()
        stack.start_redis()
        stack.start_s3()
        stack.write_instance()
        stack.create_storage(stack.env(warehouse=DEPLOYMENT_WAREHOUSE))
        stack.start_workers(workers, stack.env(warehouse=DEPLOYMENT_WAREHOUSE))
    except BaseException:
        stack.stop()
        raise
    return stack
