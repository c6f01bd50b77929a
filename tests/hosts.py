"""Hosts for the distributed test and bench, on this machine: Celery workers each in a network namespace of its
own (`ip netns`, a veth pair into a private bridge), and the services they share on the bridge's address: a
PostgreSQL server of the test's own (the Dagster instance and the result store, each a database) and a Redis
broker. A worker reaches them only over its veth, as another host would; nothing listens for it on 127.0.0.1.

Needs root (network namespaces, the postgres system user), Debian's `postgresql`, `redis-server` and `iproute2`
(`.ci/services.sh` installs them). A failure to set any of it up fails the test: never skipped."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
from dagster._core.definitions.reconstruct import ReconstructableRepository

from opportunity_assets.distributed import BROKER_VARIABLE, QUEUE, VISIBILITY_VARIABLE
from resources.store import STORE_URL_VARIABLE
from tests.daemon import QUIET, InProcessDaemon

ROOT = Path(__file__).resolve().parent.parent
USER = PASSWORD = "opportunity"
PG_PORT, REDIS_PORT = 5432, 6379
INSTANCE_DB, STORE_DB = "dagster", "results"


def _run(*command: str) -> None:
    subprocess.run(command, check=True, capture_output=True, text=True)


def _wait_for_port(host: str, port: int, what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{what} did not come up on {host}:{port} within {seconds:.0f} s")


def _free_subnet() -> int:
    """A third octet for 10.231.X.0/24 that no interface here uses (the pid picks first, so parallel runs differ)."""
    taken = subprocess.run(["ip", "-o", "-4", "addr"], check=True, capture_output=True, text=True).stdout
    for offset in range(200):
        octet = 20 + (os.getpid() + offset) % 200
        if f" 10.231.{octet}." not in taken:
            return octet
    raise RuntimeError("no free 10.231.X.0/24 subnet")


@dataclass
class Network:
    """A bridge with the services' address (`host`) and one namespace per worker, each with its own address."""

    prefix: str
    host: str
    subnet: str
    namespaces: dict[str, str] = field(default_factory=dict)
    """Worker name -> its namespace."""
    addresses: dict[str, str] = field(default_factory=dict)
    """Worker name -> its address on the bridge."""


@contextmanager
def private_network(workers: Sequence[str]) -> Iterator[Network]:
    """The bridge and a namespace per worker (lo up, a veth into the bridge, a default route to the host);
    everything is deleted afterwards."""
    octet = _free_subnet()
    tag = f"osc{os.getpid() % 100000}"
    network = Network(prefix=tag, host=f"10.231.{octet}.1", subnet=f"10.231.{octet}.0/24")
    bridge = f"{tag}br"
    with ExitStack() as cleanup:
        _run("ip", "link", "add", bridge, "type", "bridge")
        cleanup.callback(subprocess.run, ["ip", "link", "del", bridge], capture_output=True)
        _run("ip", "addr", "add", f"{network.host}/24", "dev", bridge)
        _run("ip", "link", "set", bridge, "up")
        for number, name in enumerate(workers, start=1):
            namespace, outside, inside = f"{tag}ns{number}", f"{tag}h{number}", f"{tag}n{number}"
            address = f"10.231.{octet}.{10 + number}"
            _run("ip", "netns", "add", namespace)
            cleanup.callback(subprocess.run, ["ip", "netns", "del", namespace], capture_output=True)
            _run("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
            _run("ip", "link", "set", outside, "master", bridge)
            _run("ip", "link", "set", outside, "up")
            _run("ip", "link", "set", inside, "netns", namespace)
            for command in (("ip", "addr", "add", f"{address}/24", "dev", inside), ("ip", "link", "set", inside, "up"),
                            ("ip", "link", "set", "lo", "up"), ("ip", "route", "add", "default", "via", network.host)):
                _run("ip", "netns", "exec", namespace, *command)
            network.namespaces[name], network.addresses[name] = namespace, address
        yield network


def _postgres_bin() -> Path:
    versions = sorted(Path("/usr/lib/postgresql").iterdir(), key=lambda p: [int(x) for x in p.name.split(".")])
    return versions[-1] / "bin"


@contextmanager
def private_postgres(network: Network) -> Iterator[None]:
    """A PostgreSQL server of its own, listening on the bridge's address only (password logins from the subnet),
    with the instance's and the store's databases; stopped and deleted afterwards. Run as the postgres user."""
    directory = Path(tempfile.mkdtemp(prefix="osc-pg-"))
    shutil.chown(directory, "postgres")
    password_file = directory / "password"
    password_file.write_text(PASSWORD)
    shutil.chown(password_file, "postgres")
    data = directory / "data"
    as_postgres = ("runuser", "-u", "postgres", "--")
    try:
        _run(*as_postgres, str(_postgres_bin() / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={password_file}",
             "--auth-host=scram-sha-256", "--auth-local=trust", "--no-sync")
        with (data / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all {network.subnet} scram-sha-256\n")
        options = (f"-c listen_addresses={network.host} -c port={PG_PORT} -c unix_socket_directories={directory} "
                   "-c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        _run(*as_postgres, str(_postgres_bin() / "pg_ctl"), "-D", str(data), "-o", options, "-l",
             str(directory / "log"), "-w", "start")
        try:
            for database in (INSTANCE_DB, STORE_DB):
                _run(*as_postgres, str(_postgres_bin() / "createdb"), "-h", str(directory), "-p", str(PG_PORT),
                     "-U", USER, database)
            yield
        finally:
            subprocess.run([*as_postgres, str(_postgres_bin() / "pg_ctl"), "-D", str(data), "-m", "immediate",
                            "-w", "stop"], capture_output=True)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def private_redis(network: Network) -> Iterator[None]:
    """Debian's redis-server on the bridge's address, nothing persisted; stopped afterwards."""
    directory = tempfile.mkdtemp(prefix="osc-redis-")
    server = subprocess.Popen(["redis-server", "--bind", network.host, "--port", str(REDIS_PORT), "--save", "",
                               "--appendonly", "no", "--protected-mode", "no", "--dir", directory],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(network.host, REDIS_PORT, "redis-server")
        yield
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(directory, ignore_errors=True)


def cluster_environment(network: Network, visibility_seconds: int) -> dict[str, str]:
    """What every process of the deployment is given: the instance (deploy/dagster.yaml's variables), the store,
    the broker, and the workers' visibility timeout."""
    return {"DAGSTER_PG_USERNAME": USER, "DAGSTER_PG_PASSWORD": PASSWORD, "DAGSTER_PG_HOST": network.host,
            "DAGSTER_PG_DB": INSTANCE_DB, "DAGSTER_PG_PORT": str(PG_PORT),
            STORE_URL_VARIABLE: f"postgresql://{USER}:{PASSWORD}@{network.host}:{PG_PORT}/{STORE_DB}",
            BROKER_VARIABLE: f"redis://{network.host}:{REDIS_PORT}/0",
            VISIBILITY_VARIABLE: str(visibility_seconds)}


@dataclass
class Workers:
    """Celery worker processes, one per namespace, each a session of its own (killed as a whole)."""

    network: Network
    environment: dict[str, str]
    code: Path
    """The folder holding the definitions module the runs are launched from (on the workers' PYTHONPATH)."""
    logs: Path
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self, name: str) -> None:
        namespace = self.network.namespaces[name]
        environment = {**os.environ, **self.environment, "PYTHONPATH": os.pathsep.join([str(self.code), str(ROOT)])}
        with (self.logs / f"{name}.log").open("ab") as log:
            self.processes[name] = subprocess.Popen(
                ["ip", "netns", "exec", namespace, sys.executable, "-m", "celery",
                 "-A", "opportunity_assets.celery_app", "worker", "-Q", QUEUE, "-c", "1", "-n", f"{name}@%h",
                 "--without-gossip", "--without-mingle", "-l", "WARNING"],
                cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, seconds: float = 90) -> None:
        """Until every started worker answers a ping over the broker."""
        from celery import Celery
        from kombu.exceptions import OperationalError
        from redis.exceptions import ConnectionError as RedisConnectionError

        broker = self.environment[BROKER_VARIABLE]
        app = Celery(broker=broker, backend=broker)
        deadline = time.monotonic() + seconds
        expected = set(self.processes)
        while time.monotonic() < deadline:
            try:
                replies = app.control.ping(timeout=1)
            except (OSError, RedisConnectionError, OperationalError):  # the broker is still starting up
                time.sleep(0.5)
                continue
            answered = {name.partition("@")[0] for reply in replies for name in reply}
            if expected <= answered:
                return
            for name, process in self.processes.items():
                if process.poll() is not None:
                    raise RuntimeError(f"worker {name} exited ({process.returncode}): see {self.logs / name}.log")
        raise RuntimeError(f"workers {sorted(expected)} did not all answer within {seconds:.0f} s")

    def kill(self, name: str) -> None:
        """SIGKILL to every process of the worker (its host going down)."""
        process = self.processes.pop(name)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def stop(self) -> None:
        for name in list(self.processes):
            self.kill(name)


@contextmanager
def celery_cluster(names: Sequence[str], directory: Path, *, visibility_seconds: int) -> Iterator[tuple[Network,
                                                                                                       Workers]]:
    """The network, PostgreSQL, Redis and the named workers (started, not yet waited for); torn down afterwards.
    `directory` holds the definitions module the workers import (see `write_definitions`) and their logs."""
    with private_network(names) as network, private_postgres(network), private_redis(network):
        workers = Workers(network, cluster_environment(network, visibility_seconds), code=directory, logs=directory)
        try:
            yield network, workers
        finally:
            workers.stop()


MODULE = "night_definitions"


def write_definitions(directory: Path, *, pack: Path, store_path: Path, settings: Path) -> None:
    """The code location every host loads: a module building the definitions with this pack and these settings."""
    (directory / f"{MODULE}.py").write_text(
        '"""The definitions the distributed runs are launched from (written by tests/hosts.py)."""\n'
        "from opportunity_assets.definitions import build_definitions\n\n"
        f"defs = build_definitions(criteria_path={str(pack)!r}, store_path={str(store_path)!r}, "
        f"settings_path={str(settings)!r})\n")


RUNS_AT_ONCE = 4
"""Runs orchestrated at once, each in a process of its own."""
MODEL_RUNS_AT_ONCE = 2
"""Of which tagged `llm` at once: deploy/dagster.yaml's run queue limit."""


def _orchestrate(code: str, job_name: str, tags: dict[str, str]) -> str:
    """In a process of its own, as the run launcher's `dagster api execute_run` would: one run of the job on the
    instance of DAGSTER_HOME, its steps on the workers. Returns the run's id."""
    repository = ReconstructableRepository.for_module(MODULE, "defs", working_directory=code)
    with dg.DagsterInstance.get() as instance:
        result = dg.execute_job(repository.get_reconstructable_job(job_name), instance=instance, run_config=QUIET,
                                tags=tags)
        return result.dagster_run.run_id


class CeleryDaemon(InProcessDaemon):
    """The sensor loop of tests/daemon.py, each tick's runs executed side by side as the run queue would start them
    (`RUNS_AT_ONCE`, `MODEL_RUNS_AT_ONCE`) with the definitions' executor (celery: the steps go to the workers),
    from the module of `write_definitions`. Each run is orchestrated in a process of its own, forked from a server
    that imported the definitions once (Dagster's run setup is not safe in threads: `logging.config.dictConfig`)."""

    def __init__(self, defs: dg.Definitions, instance: dg.DagsterInstance, cursor_file: Path,
                 code: Path) -> None:
        super().__init__(defs, instance, cursor_file)
        self.code = str(code)
        self.model_slots = threading.BoundedSemaphore(MODEL_RUNS_AT_ONCE)
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([MODULE, "tests.hosts"])
        self.processes = ProcessPoolExecutor(max_workers=RUNS_AT_ONCE, mp_context=context, max_tasks_per_child=1)

    def close(self) -> None:
        self.processes.shutdown()

    def execute(self, job_name: str, partition_key: str | None, tags: dict[str, str]) -> dg.DagsterRun:
        """One run of the job, orchestrated in its own process; its steps on whichever workers take them."""
        partition = {"dagster/partition": partition_key} if partition_key else {}
        with self.model_slots if "llm" in self.defs.resolve_job_def(job_name).tags else nullcontext():
            run_id = self.processes.submit(_orchestrate, self.code, job_name, {**tags, **partition}).result()
        run = self.instance.get_run_by_id(run_id)
        assert run is not None
        return run

    def execute_all(self, runs: Sequence[tuple[str, str | None, dict[str, str]]]) -> list[dg.DagsterRun]:
        """A sensor's requested runs, side by side."""
        with ThreadPoolExecutor(max_workers=RUNS_AT_ONCE) as pool:
            return list(pool.map(lambda run: self.execute(*run), runs))


def wait_until(holds: Callable[[], bool], what: str, seconds: float = 60, poll: float = 0.1) -> None:
    deadline = time.monotonic() + seconds
    while not holds():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds:.0f} s waiting for {what}")
        time.sleep(poll)
