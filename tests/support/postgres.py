"""A private PostgreSQL server for tests: a throwaway cluster in a temporary directory.

The server listens on a unix socket in that directory only (optionally also on a free
loopback TCP port), trusts every connection there, and is stopped and deleted by `stop()`.
Only PostgreSQL's own programs are used (initdb, pg_ctl, psql), so the helper works without
a Python driver installed.
"""

from __future__ import annotations

import os
import pwd
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import quote

SUPERUSER = "cafleet"
LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 5432
PROGRAMS = ("initdb", "pg_ctl", "postgres", "psql")
# initdb and postgres refuse to run as root; under root they run as this existing user.
SERVER_USER = "nobody"
# Durability is pointless for a cluster deleted after the run; without it writes are cheap.
SPEED_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
DATABASE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")  # needs no quoting anywhere
START_TIMEOUT = 60
# A unix socket path is limited to about 100 bytes: a long TMPDIR falls back to /tmp.
MAX_BASE_LENGTH = 60


def find_bindir() -> Path | None:
    """The directory with initdb, pg_ctl, postgres and psql: `pg_config --bindir` first
    (which can name a client-only version on Debian), then Debian's
    /usr/lib/postgresql/<version>/bin, newest first, then wherever PATH finds initdb."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        try:
            done = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True
            )
            candidates.append(Path(done.stdout.strip()))
        except (OSError, subprocess.SubprocessError):
            pass
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version, reverse=True)
    initdb = shutil.which("initdb")
    if initdb is not None:
        candidates.append(Path(initdb).resolve().parent)
    for directory in candidates:
        if all(os.access(directory / name, os.X_OK) for name in PROGRAMS):
            return directory
    return None


def _version(bindir: Path) -> tuple[int, ...]:
    """/usr/lib/postgresql/9.6/bin -> (9, 6); a name that is no version sorts last."""
    try:
        return tuple(int(part) for part in bindir.parent.name.split("."))
    except ValueError:
        return (-1,)


def _clean_environment() -> dict[str, str]:
    """os.environ without PG* variables: PGHOST, PGPORT, PGDATABASE and the like would
    redirect psql and pg_ctl to some other server."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")}


def _conninfo_value(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace("'", "\\'")
    return f"'{escaped}'"


def _free_loopback_port() -> int:
    """A port nobody listens on right now; `start` retries if it is taken before postgres
    binds it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_gone(pid: int, timeout: float = 10) -> None:
    """Wait until `pid` has exited. pg_ctl's postmaster is no child of ours, so it is reaped
    by init: a zombie counts as gone."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            stat = Path(f"/proc/{pid}/stat").read_text()
        except ProcessLookupError:
            return
        except OSError:
            stat = ""  # no /proc: only kill() can tell
        if stat.rpartition(")")[2].split()[:1] == ["Z"]:
            return
        time.sleep(0.02)


class PostgresError(RuntimeError):
    """initdb, pg_ctl or psql failed; the message carries their output."""


class PostgresServer:
    """One cluster and its server, with a superuser `cafleet` and trust authentication.

    `tcp=True` also listens on LOOPBACK at a port chosen free at start (`port`); otherwise
    no TCP socket is opened at all and the directory's permissions (0700) are the only
    access control. Use as a context manager, or call `start()` and `stop()`.
    """

    def __init__(self, *, tcp: bool = False, bindir: Path | None = None) -> None:
        found = bindir or find_bindir()
        if found is None:
            raise PostgresError(
                "PostgreSQL's server programs (initdb, pg_ctl, postgres, psql) were not found"
                " (pg_config --bindir, /usr/lib/postgresql/*/bin, PATH); on Debian:"
                " apt-get install postgresql"
            )
        self.bindir = found
        self.tcp = tcp
        self.port = DEFAULT_PORT
        self._directory: Path | None = None
        self._prefix: list[str] = []  # runs a server program as the server's user

    # ------------------------------------------------------------------ life cycle

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> Self:
        """initdb a fresh cluster and start its server; returns once it accepts connections."""
        if self._directory is not None:
            raise PostgresError("the server is already started")
        base = tempfile.gettempdir()
        if len(base) > MAX_BASE_LENGTH and os.path.isdir("/tmp"):
            base = "/tmp"
        self._directory = Path(tempfile.mkdtemp(prefix="cafleet-pg-", dir=base))
        try:
            self._prefix, owner = self._server_user()
            if owner is not None:
                os.chown(self._directory, *owner)
            done = subprocess.run(
                [
                    *self._prefix,
                    str(self.bindir / "initdb"),
                    *("-D", str(self.data_dir), "-U", SUPERUSER, "--auth=trust"),
                    *("-E", "UTF8", "--locale=C"),
                    "--no-sync",  # nothing needs to survive a power cut
                ],
                cwd=self._directory,  # the server's user may not be able to enter ours
                env=_clean_environment(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            if done.returncode != 0:
                raise PostgresError(
                    f"initdb failed ({done.returncode}): {done.stdout}{done.stderr}"
                )
            self._start_server()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the server at once (no checkpoint: the data is thrown away) and delete the
        directory. Safe to call twice, or after a failed start."""
        if self._directory is None:
            return
        try:
            pid = self.pid
            if pid is not None:
                try:
                    stopped = subprocess.run(
                        [
                            *self._prefix,
                            str(self.bindir / "pg_ctl"),
                            *("stop", "-D", str(self.data_dir), "-m", "immediate", "-w", "-s"),
                            *("-t", str(START_TIMEOUT)),
                        ],
                        cwd=self._directory,
                        env=_clean_environment(),
                        capture_output=True,
                        timeout=START_TIMEOUT + 10,
                        check=False,
                    ).returncode
                except subprocess.TimeoutExpired:
                    stopped = -1
                if stopped != 0:
                    self._kill_postmaster()
                # pg_ctl returns once the lock file is gone, a moment before the process
                _wait_gone(pid)
        finally:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

    def _start_server(self) -> None:
        for attempt in range(3):
            if self.tcp:
                self.port = _free_loopback_port()
            settings = {
                "listen_addresses": LOOPBACK if self.tcp else "",
                "port": str(self.port),
                "unix_socket_directories": str(self.socket_dir),
                **SPEED_SETTINGS,
            }
            # pg_ctl hands -o to /bin/sh, hence the shell quoting.
            options = " ".join(f"-c {shlex.quote(f'{k}={v}')}" for k, v in settings.items())
            done = subprocess.run(
                [
                    *self._prefix,
                    str(self.bindir / "pg_ctl"),
                    *("start", "-D", str(self.data_dir), "-l", str(self.log_path)),
                    *("-w", "-s", "-t", str(START_TIMEOUT), "-o", options),
                ],
                cwd=self.socket_dir,
                env=_clean_environment(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=START_TIMEOUT + 10,
                check=False,
            )
            if done.returncode == 0:
                return
            log = self.log()
            if self.tcp and "could not bind" in log and attempt < 2:
                self._kill_postmaster()
                continue  # the free port was taken in between: pick another
            raise PostgresError(
                f"pg_ctl start failed ({done.returncode}): {done.stdout}{done.stderr}\n{log}"
            )

    def _server_user(self) -> tuple[list[str], tuple[int, int] | None]:
        """The command prefix that runs initdb and pg_ctl, and the (uid, gid) that must own
        the directory: nothing and no one for a normal user; for root, SERVER_USER."""
        if os.geteuid() != 0:
            return [], None
        try:
            user = pwd.getpwnam(SERVER_USER)
        except KeyError:
            raise PostgresError(
                f"running as root, PostgreSQL needs an unprivileged user: no {SERVER_USER!r}"
            ) from None
        setpriv = shutil.which("setpriv")
        if setpriv is not None:
            prefix = [
                setpriv,
                f"--reuid={user.pw_uid}",
                f"--regid={user.pw_gid}",
                "--clear-groups",
            ]
        elif (runuser := shutil.which("runuser")) is not None:
            prefix = [runuser, "-u", SERVER_USER, "--"]
        else:
            raise PostgresError("running as root, PostgreSQL needs setpriv or runuser")
        return prefix, (user.pw_uid, user.pw_gid)

    def _kill_postmaster(self) -> None:
        """SIGKILL the postmaster if pg_ctl could not stop it; its children notice its death
        and exit by themselves. A stale lock file's pid may belong to another process by now:
        it is only killed if its command line names this cluster (where /proc can tell)."""
        pid = self.pid
        if pid is None:
            return
        if Path("/proc/self/cmdline").exists():
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                return  # gone already
            if os.fsencode(self.data_dir) not in command:
                return
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        _wait_gone(pid)

    # ------------------------------------------------------------------ where it is

    @property
    def directory(self) -> Path:
        if self._directory is None:
            raise PostgresError("the server is not started")
        return self._directory

    @property
    def socket_dir(self) -> Path:
        """Holds the unix socket `.s.PGSQL.<port>`; libpq's `host` when it is a path."""
        return self.directory

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def log_path(self) -> Path:
        return self.directory / "server.log"

    @property
    def pid(self) -> int | None:
        """The postmaster's process id, from its lock file; None when it is not running."""
        try:
            first = (self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0]
        except (OSError, PostgresError):
            return None
        return int(first) if first.strip().isdigit() else None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    # ------------------------------------------------------------------ databases

    def url(self, database: str, *, tcp: bool = False) -> str:
        """A SQLAlchemy URL (psycopg 3 driver): through the unix socket, or with `tcp=True`
        through LOOPBACK:port (only when the server was started with `tcp=True`)."""
        if tcp:
            self._require_tcp()
            return f"postgresql+psycopg://{SUPERUSER}@{LOOPBACK}:{self.port}/{database}"
        query = f"host={quote(str(self.socket_dir), safe='/')}"
        if self.port != DEFAULT_PORT:
            query += f"&port={self.port}"  # the socket file is named after the port
        return f"postgresql+psycopg://{SUPERUSER}@/{database}?{query}"

    def conninfo(self, database: str, *, tcp: bool = False) -> str:
        """The same address as a libpq connection string, for psycopg.connect or psql."""
        if tcp:
            self._require_tcp()
        host = LOOPBACK if tcp else str(self.socket_dir)
        parts = {"host": host, "port": str(self.port), "user": SUPERUSER, "dbname": database}
        return " ".join(f"{k}={_conninfo_value(v)}" for k, v in parts.items())

    def create_database(self, name: str, *, tcp: bool = False, template: str | None = None) -> str:
        """Create database `name` (lower-case letters, digits, `_`): empty, or a copy of the
        database `template` (which nobody may be connected to); returns its URL."""
        for named in (name, template or name):
            if not DATABASE_NAME.fullmatch(named):
                raise ValueError(f"database name must match {DATABASE_NAME.pattern}: {named!r}")
        copied = f' TEMPLATE "{template}"' if template else ""
        self.psql(f'CREATE DATABASE "{name}"{copied}')
        return self.url(name, tcp=tcp)

    def drop_database(self, name: str) -> None:
        """Drop `name`, first ending whatever sessions are still connected to it."""
        if not DATABASE_NAME.fullmatch(name):
            raise ValueError(f"database name must match {DATABASE_NAME.pattern}: {name!r}")
        self.psql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            f" WHERE datname = '{name}' AND pid <> pg_backend_pid()",
            f'DROP DATABASE IF EXISTS "{name}"',  # waits for the ended sessions to leave
        )

    def psql(self, *commands: str, database: str = "postgres") -> str:
        """Run each SQL command in its own transaction; returns the rows, `|`-separated."""
        argv = [
            str(self.bindir / "psql"),
            *("-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"),
            *("-h", str(self.socket_dir), "-p", str(self.port)),
            *("-U", SUPERUSER, "-d", database),
        ]
        for command in commands:
            argv += ["-c", command]
        done = subprocess.run(
            argv,
            env=_clean_environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise PostgresError(f"psql failed ({done.returncode}): {done.stderr}")
        return done.stdout.strip()

    def _require_tcp(self) -> None:
        if not self.tcp:
            raise PostgresError("the server listens on its unix socket only (tcp=False)")
